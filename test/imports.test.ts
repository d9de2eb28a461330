/**
 * The shape of the code, kept true (issue 20): no import circle anywhere, the command
 * line (cli/) is the front door nothing else imports, and data flows one way from
 * builder/ through core/ to server/ (the server never imports the builder).
 */
import { describe, expect, it } from 'vitest';
import { ROOT } from './harness.js';
import { circles, importGraph } from './import-graph.js';

/**
 * Imports from a file under one of `from` into a file under `to`, as "a -> b". Tests
 * are left out: a server test may build its fixture snapshot with the builder.
 */
function crossing(graph: Map<string, string[]>, from: string[], to: string): string[] {
  const out: string[] = [];
  for (const [file, deps] of graph) {
    if (!from.some((f) => file.startsWith(`${f}/`)) || /\.test(-helper)?\.ts$/.test(file)) continue;
    for (const d of deps) if (d.startsWith(`${to}/`)) out.push(`${file} -> ${d}`);
  }
  return out;
}

describe('the imports between folders', () => {
  const graph = importGraph(ROOT);

  it('reads the imports it checks (a sanity check of the reader itself)', () => {
    expect(graph.get('cli/main.ts')).toContain('cli/args.ts');
    expect(graph.get('cli/main.ts')).toContain('cli/serve.ts');
    expect(graph.get('server/supervisor.ts')).toContain('core/worker.ts');
  });

  it('form no circle: no file reaches itself through its imports', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('nothing under core/, builder/ or server/ imports cli/ (the command line is the front door)', () => {
    expect(crossing(graph, ['core', 'builder', 'server', 'schemas'], 'cli')).toEqual([]);
  });

  it('the server never imports the builder: snapshots flow from builder/ through core/ to server/', () => {
    expect(crossing(graph, ['server'], 'builder')).toEqual([]);
  });

  it('core/ imports neither the builder nor the server', () => {
    expect([...crossing(graph, ['core'], 'builder'), ...crossing(graph, ['core'], 'server')]).toEqual([]);
  });

  it('finds a circle when there is one (the check can fail)', () => {
    const g = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(circles(g)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
