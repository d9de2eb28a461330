/**
 * The project's import graph, read from the sources (no tool to install): each file
 * under cli/, core/, builder/, server/ and schemas/ and the project files it imports.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const FOLDERS = ['cli', 'core', 'builder', 'server', 'schemas'];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

// Static imports and re-exports (type-only ones too: a circle of types is still a
// circle to a reader) and dynamic import() of a literal path.
const IMPORT =
  /(?:^|[\n;])\s*(?:import|export)\s[^'";]*?from\s*'([^']+)'|(?:^|[\n;])\s*import\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g;

/** Each source file (relative to the root) and the project files it imports. */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of FOLDERS.filter((f) => existsSync(join(root, f))).flatMap((f) =>
    sources(join(root, f)),
  )) {
    const text = readFileSync(file, 'utf8');
    const deps: string[] = [];
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (!spec.startsWith('.')) continue;
      deps.push(relative(root, resolve(dirname(file), spec.replace(/\.js$/, '.ts'))));
    }
    graph.set(relative(root, file), deps);
  }
  return graph;
}

/** Every strongly connected group of more than one file (or a file importing itself): the circles. */
export function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}
