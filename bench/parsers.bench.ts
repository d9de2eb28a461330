/**
 * Instructions per call of the source and body parsers (callgrind), to show that
 * splitting a parsing loop into named steps costs nothing measurable: a fixed generated
 * input, a warm-up that lets V8 optimise, then a fixed number of calls counted alone.
 *
 *   npx tsx bench/parsers.bench.ts [--checkout DIR] [--runs 3] [--parsers prices,daily,…]
 *
 * Each parser runs in its own process: the checkout's bench/parsers.bench.ts bundled by
 * esbuild (so another checkout, e.g. the commit before a change, is measured by its
 * own code) and started as `valgrind --tool=callgrind --collect-atstart=no
 * --toggle-collect=…RunInContext* node --single-threaded BUNDLE --measure NAME`. The
 * counted calls run inside `vm.Script.runInThisContext`, whose C++ entry toggles
 * collection, so the count is those calls and nothing else (no start-up, no warm-up,
 * no generation of the input). `read-prices` (worker threads, asynchronous) is
 * counted whole-run instead, with collection on from the start. No `gc()` before the
 * count: tried, it doubled a daily file's count (V8 compiling again inside the count,
 * presumably), so a collection falling into the count is left to the spread.
 *
 * Without valgrind (`--measure NAME` alone) a process just runs the calls and prints
 * a checksum of what they returned.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { readPrices } from '../builder/read-prices.js';
import { BuildReport } from '../builder/report/build-report.js';
import { parseDailyFile } from '../builder/source/daily-file.js';
import { fundsFileText, parseFundsFile } from '../builder/source/funds.js';
import { parsePriceFile } from '../builder/source/prices.js';
import { parseDay } from '../core/dates.js';
import { pythonJsonError } from '../server/pydantic/json-error.js';
import { parsePythonJson } from '../server/pydantic/json-numbers.js';
import { benchArgs } from './setup.js';

/** A deterministic stream of numbers in [0, 1), so every run parses the same bytes. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const LATEST = parseDay('2030-12-31') as number;
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** An EODHD price file of `rows` weekdays from 2000, about one row in 200 bad in one of the reported ways. */
function priceFile(rows: number, seed: number): Uint8Array {
  const rnd = lcg(seed);
  let out = 'Date,Open,High,Low,Close,Adjusted_close,Volume\n';
  let day = Date.UTC(2000, 0, 3);
  let price = 50;
  for (let i = 0; i < rows; i++) {
    const date = new Date(day).toISOString().slice(0, 10);
    price *= 1 + (rnd() - 0.5) / 50;
    const close = price.toFixed(2);
    const bad = i % 200 === 199 ? (i / 200) % 4 : -1;
    if (bad === 0) out += `${date},${close},${close},${close},${close},n/a,100\n`;
    else if (bad === 1) out += `${date},${close},${close},${close},${close},1,234.5,100\n`;
    else if (bad === 2) out += `${date},${close},${close}\n`;
    else
      out += `${date},${close},${close},${close},${close},${(price * 0.97).toFixed(4)},${Math.floor(rnd() * 1e6)}\n`;
    day += (new Date(day).getUTCDay() === 5 ? 3 : 1) * 86_400_000;
    if (bad === 3) day -= 86_400_000; // a date out of order
  }
  return enc(out);
}

/** A daily file of `rows` funds on one day, with dividends, splits and a few bad rows. */
function dailyFile(rows: number): Uint8Array {
  const rnd = lcg(7);
  let out = 'Code,Date,Close,Adjusted_close,Dividend,Split\n';
  for (let i = 0; i < rows; i++) {
    const close = (10 + rnd() * 200).toFixed(2);
    const div = i % 20 === 0 ? (rnd() * 0.5).toFixed(4) : '';
    const split = i % 500 === 0 ? '2' : '';
    const date = i % 300 === 299 ? '2026-13-01' : '2026-11-13';
    out += `F${String(i).padStart(5, '0')},${date},${close},${close},${div},${split}\n`;
  }
  return enc(out);
}

/** A funds.csv of `rows` funds, ETF, FUND and other types, some inactive. */
function fundsFile(rows: number): Uint8Array {
  const types = ['ETF', 'FUND', 'FUND', 'INDEX'];
  return enc(
    fundsFileText(
      Array.from({ length: rows }, (_, i) => ({
        code: `F${String(i).padStart(5, '0')}`,
        name: `Fund ${i} Growth, Income & Value`,
        country: 'USA',
        exchange: i % 3 === 0 ? 'NYSE ARCA' : 'NMFQS',
        currency: 'USD',
        type: types[i % 4],
        isin: i % 5 === 0 ? null : `US${String(i).padStart(9, '0')}5`,
        isInactive: i % 50 === 0,
        inactiveDate: i % 50 === 0 ? (parseDay('2020-06-30') as number) : null,
      })),
    ),
  );
}

/** A request body as clients send them: codes, numbers of both kinds, nesting, escapes. */
function jsonBody(): string {
  const rnd = lcg(11);
  const funds = Array.from({ length: 60 }, (_, i) => ({
    code: `F${i}\u00e9"x`,
    weight: Number((rnd() * 100).toFixed(3)),
    shares: Math.floor(rnd() * 1e6),
    tags: ['a', 'b\\n', { deep: [1, 2.5, -0.0, 1e-7, [true, false, null]] }],
  }));
  return JSON.stringify({ codes: funds.map((f) => f.code), as_of: '2026-11-13', funds }, null, 1)
    .replace('"shares": 0', '"shares": 1899.0')
    .replaceAll('"weight": 5', '"weight": 5.0e0');
}

interface Case {
  /** Calls before counting, enough for V8 to optimise the loop. */
  warmup: number;
  n: number;
  /** One call; the number returned goes into the checksum, so nothing is optimised away. */
  call: () => number;
}

/** A file parser's case: each call reads 2,000 rows, so fewer calls make the same work. */
function fileCase(call: () => number): Case {
  return { warmup: 20, n: 10, call };
}

function cases(): Record<string, () => Case> {
  return {
    prices: () => {
      const bytes = priceFile(2000, 1);
      return fileCase(() => {
        const r = parsePriceFile(bytes, 'prices/F.csv', 'F', LATEST);
        return r.dates.length + r.problems.length + r.lastClose;
      });
    },
    daily: () => {
      const bytes = dailyFile(2000);
      return fileCase(() => {
        const r = parseDailyFile(bytes, 'daily/2026-11-13.csv', LATEST, 'the bench');
        return r.rows.length + r.problems.length;
      });
    },
    funds: () => {
      const bytes = fundsFile(2000);
      return fileCase(() => {
        const r = parseFundsFile(bytes, 'funds.csv');
        return r.funds.length + r.skippedOtherTypes + r.problems.length;
      });
    },
    'json-error': () => {
      const text = `${jsonBody().slice(0, -2)},\n}`; // a trailing comma at the very end
      return { warmup: 200, n: 100, call: () => pythonJsonError(text).pos };
    },
    'json-numbers': () => {
      const text = jsonBody();
      return { warmup: 200, n: 100, call: () => (parsePythonJson(text, 6, '…') === null ? 0 : 1) };
    },
  };
}

/** One process's work: `name`'s counted calls (or, for read-prices, one whole read). */
async function measure(name: string): Promise<void> {
  if (name === 'read-prices') {
    const dir = mkdtempSync(join(tmpdir(), 'parsers-bench-'));
    const tasks = Array.from({ length: 40 }, (_, i) => {
      const path = join(dir, `F${i}.csv`);
      writeFileSync(path, priceFile(1000 + 50 * i, i + 1));
      return { code: `F${i}`, path, file: `prices/F${i}.csv` };
    });
    const r = await readPrices(tasks, new BuildReport(), { threads: 2 });
    rmSync(dir, { recursive: true });
    console.log(`checksum ${r.dataRows}`);
    return;
  }
  const make = cases()[name];
  if (make === undefined) throw new Error(`no parser ${name}`);
  const c = make();
  let sum = 0;
  for (let k = 0; k < c.warmup; k++) sum += c.call();
  (globalThis as Record<string, unknown>).__counted = () => {
    for (let k = 0; k < c.n; k++) sum += c.call();
  };
  // Collection toggles on entering and leaving this C++ function (see the header).
  new Script('__counted()').runInThisContext();
  console.log(`checksum ${sum} calls ${c.n}`);
}

const TOGGLE = '--toggle-collect=node::contextify::ContextifyScript::RunInContext*';

/** Instructions per counted call of `name`, one valgrind run. */
function countOnce(bundle: string, name: string, outDir: string): number {
  const whole = name === 'read-prices';
  const res = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${join(outDir, `${name}.%p`)}`,
      ...(whole ? [] : ['--collect-atstart=no', TOGGLE]),
      'node',
      '--single-threaded',
      bundle,
      '--measure',
      name,
    ],
    { encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  const collected = /Collected : (\d+)/.exec(res.stderr);
  const calls = /calls (\d+)/.exec(res.stdout);
  if (res.status !== 0 || collected === null)
    throw new Error(`valgrind failed for ${name}: ${res.stderr.slice(-2000)}`);
  return Number(collected[1]) / (calls === null ? 1 : Number(calls[1]));
}

/** The checkout's copy of this file bundled into one script (and the price worker beside it). */
async function bundleOf(checkout: string, outDir: string): Promise<string> {
  const { build } = await import('esbuild');
  await build({
    entryPoints: [join(checkout, 'bench', 'parsers.bench.ts'), join(checkout, 'builder', 'prices-worker.ts')],
    entryNames: '[name]',
    outdir: outDir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'error',
  });
  return join(outDir, 'parsers.bench.js');
}

async function main(): Promise<void> {
  const args = benchArgs();
  const only = args.get('measure');
  if (only !== undefined) return measure(only);
  const checkout = args.get('checkout') ?? fileURLToPath(new URL('..', import.meta.url));
  const runs = Number(args.get('runs') ?? 3);
  const names = (args.get('parsers') ?? [...Object.keys(cases()), 'read-prices'].join(',')).split(',');
  // The bundle and the callgrind dumps (for callgrind_annotate while it runs), removed at the end.
  const outDir = mkdtempSync(join(tmpdir(), 'parsers-bench-'));
  const bundle = await bundleOf(checkout, outDir);
  console.log(`checkout ${checkout}`);
  console.log('| parser | instructions per call (median of runs) | runs | spread |');
  console.log('|---|---|---|---|');
  for (const name of names) {
    const counts = Array.from({ length: runs }, () => countOnce(bundle, name, outDir)).sort((a, b) => a - b);
    const median = counts[Math.floor(counts.length / 2)];
    const spread = ((counts[counts.length - 1] - counts[0]) / median) * 100;
    const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
    console.log(`| ${name} | ${fmt(median)} | ${counts.map(fmt).join(' / ')} | ${spread.toFixed(2)} % |`);
  }
  rmSync(outDir, { recursive: true });
}

await main();
