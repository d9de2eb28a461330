/**
 * The shape of the code, kept true: no import circle between files or between folders,
 * the command line (cli/) is the front door nothing else imports, data flows one way
 * from builder/ through core/ to server/, the accounts domain (accounts/) is shared by
 * the command line and the server and imports neither, schemas/ is declarations only,
 * and no application code imports the tests' helpers (test/).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, tempDir } from './harness.js';
import { circles, crossing, folderGraph, importGraph, SOURCE_FOLDERS } from './import-graph.js';

/** Every rule the layout keeps, broken ones as lines naming the files or folders. */
function violations(graph: Map<string, string[]>): string[] {
  const never = (from: string[], to: string) => crossing(graph, from, to).map((c) => `${c} (${to}/)`);
  return [
    ...circles(graph).map((c) => `file circle: ${c.join(' -> ')}`),
    ...circles(folderGraph(graph)).map((c) => `folder circle: ${c.join(' <-> ')}`),
    ...never(['accounts', 'builder', 'core', 'schemas', 'server'], 'cli'),
    ...never(['server', 'accounts', 'schemas', 'core'], 'builder'),
    ...never(['core', 'schemas', 'accounts', 'builder'], 'server'),
    ...never(['core', 'schemas', 'builder'], 'accounts'),
    ...never(['core'], 'schemas'),
    ...never(SOURCE_FOLDERS, 'test'),
  ];
}

/** A project of the given files (path → text) in a temporary directory, and its graph. */
function plantedGraph(files: Record<string, string>): Map<string, string[]> {
  const root = tempDir('fr-imports-');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return importGraph(root);
}

describe('the imports between files and folders', () => {
  const graph = importGraph(ROOT);

  it('reads the imports it checks (a sanity check of the reader itself)', () => {
    expect(graph.get('cli/main.ts')).toContain('cli/shared/args.ts');
    expect(graph.get('server/supervisor.ts')).toContain('core/start-thread.ts');
    expect(graph.get('server/app-context.ts')).toContain('server/mcp/http.ts'); // a type-only import
  });

  it('reads imports in every quoting style: single, double, backtick import(), side-effect, re-export, typeof import()', () => {
    const g = plantedGraph({
      'core/a.ts': [
        "import { x } from './single.js';",
        'import type { Y } from "./double.js";',
        "import './side-effect.js';",
        'export * from "./re-export.js";',
        'const m = await import(`./dynamic.js`);',
        "let t: typeof import('./in-a-type.js');",
      ].join('\n'),
    });
    expect(g.get('core/a.ts')).toEqual([
      'core/single.ts',
      'core/double.ts',
      'core/side-effect.ts',
      'core/re-export.ts',
      'core/dynamic.ts',
      'core/in-a-type.ts',
    ]);
  });

  it('keeps every rule on the code as it is', () => {
    expect(violations(graph)).toEqual([]);
  });

  it('finds a file circle', () => {
    const g = plantedGraph({
      'core/a.ts': "import { b } from './b.js';",
      'core/b.ts': "import { c } from './c.js';",
      'core/c.ts': "import { a } from './a.js';",
    });
    expect(violations(g)).toEqual(['file circle: core/a.ts -> core/b.ts -> core/c.ts']);
  });

  it('finds a folder circle made of files that form none', () => {
    const g = plantedGraph({
      'server/app.ts': "import { h } from './http/call.js';",
      'server/http/call.ts': "import { x } from '../log.js';",
      'server/log.ts': 'export const x = 1;',
    });
    expect(violations(g)).toEqual(['folder circle: server <-> server/http']);
  });

  it('finds schemas/ importing the server, the source importing test/, and core/ importing the builder', () => {
    const g = plantedGraph({
      'schemas/routes.ts': 'import { answer } from "../server/api/answers.js";',
      'server/api/answers.ts': 'export const answer = 1;',
      'core/snapshot/columns.ts': "import { seededRandom } from '../../test/seeded-random.js';",
      'core/dates.ts': "const b = await import('../builder/build.js');",
      'builder/build.ts': 'export {};',
      'test/seeded-random.ts': 'export {};',
    });
    expect(violations(g).sort()).toEqual([
      'core/dates.ts -> builder/build.ts (builder/)',
      'core/snapshot/columns.ts -> test/seeded-random.ts (test/)',
      'schemas/routes.ts -> server/api/answers.ts (server/)',
    ]);
  });

  it('lets tests import across the rules (a server test builds its fixture with the builder)', () => {
    const g = plantedGraph({
      'server/api/answers.test.ts':
        "import { build } from '../../builder/build.js';\nimport '../../test/harness.js';",
      'builder/build.ts': 'export {};',
      'test/harness.ts': 'export {};',
    });
    expect(violations(g)).toEqual([]);
  });
});
