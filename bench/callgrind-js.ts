/**
 * A callgrind profile of the server with its JavaScript named. callgrind_annotate
 * shows V8's compiled code as `???:0x…` addresses; a server started with
 * `--perf-basic-prof` writes /tmp/perf-PID.map (start, size, name of every code
 * object), and this prints the annotation with each such address replaced by its
 * function (`*` TurboFan, `^` Sparkplug, `~` interpreted), per request when told
 * how many the dump counted.
 *
 *   NODE_OPTIONS=--perf-basic-prof FUNDRETURNS_KEEP_CALLGRIND=1 npx tsx bench/instructions.bench.ts …
 *   npx tsx bench/callgrind-js.ts --dump DUMP --map /tmp/perf-PID.map [--inclusive yes] [--per 500] [--top 40]
 *
 * The PID is the server's (valgrind runs node in its own process); the dumps are in
 * the directory the bench names at the end.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { benchArgs } from './setup.js';

const args = benchArgs();
const dump = args.get('dump');
const mapFile = args.get('map');
if (dump === undefined || mapFile === undefined) {
  console.error('usage: callgrind-js.ts --dump DUMP --map PERF_MAP [--inclusive yes] [--per N] [--top N]');
  process.exit(2);
}
const per = Number(args.get('per') ?? 1);
const top = Number(args.get('top') ?? 40);

/** Code objects by start address; V8 reuses code space, so a later entry wins. */
const code: Array<{ start: number; end: number; name: string }> = [];
for (const line of readFileSync(mapFile, 'utf8').split('\n')) {
  const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
  if (m)
    code.push({
      start: Number.parseInt(m[1], 16),
      end: Number.parseInt(m[1], 16) + Number.parseInt(m[2], 16),
      name: m[3],
    });
}
const nameOf = (addr: number): string | null => {
  for (let k = code.length - 1; k >= 0; k--)
    if (addr >= code[k].start && addr < code[k].end) return code[k].name;
  return null;
};

const annotate = spawnSync(
  'callgrind_annotate',
  ['--threshold=100', ...(args.get('inclusive') === 'yes' ? ['--inclusive=yes'] : []), dump],
  { encoding: 'utf8', maxBuffer: 1 << 28 },
);
if (annotate.status !== 0) {
  console.error(annotate.stderr);
  process.exit(1);
}
let shown = 0;
for (const line of annotate.stdout.split('\n')) {
  const m = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/.exec(line);
  if (m === null) continue;
  const ir = Number(m[1].replaceAll(',', ''));
  const where = m[2].replace(/\?\?\?:0x([0-9a-f]+)( \[\?\?\?\])?/, (all, hex: string) => {
    const n = nameOf(Number.parseInt(hex, 16));
    return n === null ? all : n.replace(/file:\/\/\/\S*\/dist\//, '');
  });
  console.log(
    `${Math.round(ir / per)
      .toLocaleString('en-US')
      .padStart(12)}  ${where.slice(0, 160)}`,
  );
  if (++shown >= top) break;
}
