import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratch } from '../../builder/build.test-helper.js';
import { CallMeter } from '../../builder/refresh/call-meter.js';
import type { LoadProgress } from '../../builder/refresh/first-load.js';
import { main } from '../main.js';
import type { CliIo } from '../shared/io.js';
import { loadProgress } from './load-progress.js';

const dir = scratch('fr-refresh-cli-');

async function run(argv: string[]): Promise<{ code: number; err: string }> {
  const err: string[] = [];
  // A token, so that the flag under test, not the missing token, is what is refused.
  const io: CliIo = {
    out: () => {},
    err: (s) => err.push(s),
    env: { FUNDRETURNS_EODHD_TOKEN: 't' },
    isTty: false,
  };
  const code = await main(argv, io);
  return { code, err: err.join('\n') };
}

describe('refresh flags for loading and correcting', () => {
  const base = () => [
    'refresh',
    '--source',
    join(dir('src'), 'none'),
    '--snapshots',
    dir('snap'),
    '--provider',
    'eodhd',
  ];
  it.each([
    [['--max-rate', '0'], /--max-rate must be between 1 and 1000000, not 0/],
    [['--max-rate', 'fast'], /--max-rate must be a whole number, not "fast"/],
    [['--concurrency', '0'], /--concurrency must be between 1 and 64, not 0/],
    [['--concurrency', '65'], /--concurrency must be between 1 and 64, not 65/],
    [['--max-calls', '0'], /--max-calls must be between 1 and 1000000000, not 0/],
    [['--max-calls', '1e5'], /--max-calls must be a whole number, not "1e5"/],
    [['--redo', '2026-13-01'], /--redo must be a date YYYY-MM-DD, not "2026-13-01"/],
    [['--redo', '2026-11-20', '--date', '2026-11-20'], /--redo and --date do not go together/],
    [['--redo', '2026-11-20', '--estimate'], /--redo and --estimate do not go together/],
    [['--estimate=yes'], /--estimate takes no value/],
  ])('%j is a usage error (exit 2)', async (flags, message) => {
    const r = await run([...base(), ...flags]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).toContain('usage: fundreturns refresh');
  });
});

describe('the call meter (--max-rate, --max-calls)', () => {
  it('spaces request starts 60 s ÷ rate apart, and refuses a request that would pass the budget', async () => {
    let t = 0;
    const starts: number[] = [];
    const meter = new CallMeter({
      maxRate: 120,
      maxCalls: 204,
      clock: () => t,
      sleep: async (ms) => {
        t += ms;
      },
    });
    for (let i = 0; i < 5; i++) {
      await meter.acquire(1);
      starts.push(t);
    }
    expect(starts).toEqual([0, 500, 1000, 1500, 2000]);
    await meter.acquire(100);
    await expect(meter.acquire(100)).rejects.toThrow(/--max-calls budget: 105 of 204 API calls spent/);
    expect(meter.spent).toBe(105);
    expect(meter.fits(100)).toBe(false);
    expect(meter.fits(99)).toBe(true);
  });
});

describe('load progress off a terminal', () => {
  it('is one JSON line every 5 % and at the end of each phase', () => {
    const lines: string[] = [];
    let t = 0;
    const p = loadProgress({ out: () => {}, err: (s) => lines.push(s), env: {}, isTty: false }, () => t);
    const at = (done: number, phase: LoadProgress['phase'] = 'histories', total = 200): LoadProgress => ({
      phase,
      done,
      total,
      calls: done + 4,
      loaded: done,
      failed: 0,
    });
    for (let d = 0; d <= 200; d++) {
      t = d * 100;
      p.update(at(d));
    }
    p.update(at(0, 'build', 1));
    p.update(at(1, 'build', 1));
    const json = lines.map((l) => JSON.parse(l));
    const histories = json.filter((j) => j.phase === 'histories');
    expect(histories.map((j) => j.percent)).toEqual(Array.from({ length: 21 }, (_, i) => i * 5));
    expect(histories[10]).toMatchObject({
      event: 'first_load_progress',
      done: 100,
      total: 200,
      api_calls: 104,
      per_minute: 600,
    });
    expect(histories[10].eta_seconds).toBe(10);
    expect(json.at(-1)).toMatchObject({ phase: 'build', done: 1, percent: 100 });
  });
});
