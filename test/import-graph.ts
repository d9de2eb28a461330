/**
 * The project's import graph, read from the sources (no tool to install): each file
 * under the source folders and the project files it imports, and the same graph
 * folded to folders.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The folders of the application's code; `test/` and `bench/` may import them, never the reverse. */
export const SOURCE_FOLDERS = ['accounts', 'builder', 'cli', 'core', 'schemas', 'server'];

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
// circle to a reader), side-effect imports, and import() of a literal path (in code or
// in a type: `typeof import('./x.js')`), in any of the three quotes.
const IMPORT =
  /(?:^|[\n;])\s*(?:import|export)\s[^;]*?\bfrom\s*(['"])([^'"\n]+)\1|(?:^|[\n;])\s*import\s*(['"])([^'"\n]+)\3|\bimport\(\s*(['"`])([^'"`\n]+)\5\s*\)/g;

/** The project-relative specifiers a source text imports (relative ones only). */
function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[2] ?? m[4] ?? m[6];
    if (spec.startsWith('.')) out.push(spec);
  }
  return out;
}

/** Each source file (relative to the root) and the project files it imports. */
export function importGraph(root: string, folders = SOURCE_FOLDERS): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of folders
    .filter((f) => existsSync(join(root, f)))
    .flatMap((f) => sources(join(root, f)))) {
    const deps = importsOf(readFileSync(file, 'utf8')).map((spec) =>
      relative(root, resolve(dirname(file), spec.replace(/\.js$/, '.ts'))),
    );
    graph.set(relative(root, file), deps);
  }
  return graph;
}

/** Test code: suites, their helpers and the shared contract suites (they may import anything). */
function isTestFile(file: string): boolean {
  return /\.(test|test-helper|contract)\.ts$/.test(file) || file.startsWith('test/');
}

/**
 * The graph folded to folders: an edge from a file's folder to each folder it imports
 * from (test files left out: a server test may build its fixture with the builder).
 */
export function folderGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const [file, deps] of graph) {
    if (isTestFile(file)) continue;
    const from = dirname(file);
    const to = out.get(from) ?? new Set<string>();
    out.set(from, to);
    for (const d of deps) if (dirname(d) !== from) to.add(dirname(d));
  }
  return new Map([...out].map(([k, v]) => [k, [...v].sort()]));
}

/** Every strongly connected group of more than one node (or a node importing itself): the circles. */
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

/**
 * Imports that cross a rule: from a non-test file under one of `from` into a file under
 * `to`, as "a -> b".
 */
export function crossing(graph: Map<string, string[]>, from: string[], to: string): string[] {
  const out: string[] = [];
  for (const [file, deps] of graph) {
    if (!from.some((f) => file.startsWith(`${f}/`)) || isTestFile(file)) continue;
    for (const d of deps) if (d.startsWith(`${to}/`)) out.push(`${file} -> ${d}`);
  }
  return out;
}
