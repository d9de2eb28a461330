import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDay } from '../../core/dates.js';
import { listSnapshots, readCurrent, setCurrent } from '../../core/snapshot/directory.js';
import { buildFromSource } from '../build.js';
import { scratch } from '../build.test-helper.js';
import { appendDaily } from '../daily-append.js';
import { eodhdProvider } from './eodhd.js';
import { type FakeEodhd, startFakeEodhd } from './eodhd-server.test-helper.js';
import { changeLines, redo } from './redo.js';
import { refresh } from './refresh.js';
import {
  allAt,
  CODES,
  dayFile,
  evening,
  expectSameColumns,
  HISTORY,
  live,
  tenFunds,
} from './refresh.test-helper.js';

const dir = scratch('fr-redo-');
const TOKEN = 'redo-t0ken';
const FIXTURE = readFileSync(new URL('./fixtures/eodhd/eod-bulk-2026-11-23.csv', import.meta.url), 'utf8');

let server: FakeEodhd | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** Ten funds built to Friday 2026-11-20, then Monday the 23rd refreshed from the EODHD stand-in. */
async function refreshed(name: string) {
  server = await startFakeEodhd(TOKEN);
  const t = await tenFunds(dir(name));
  const provider = eodhdProvider({ baseUrl: server.url, token: TOKEN, sleep: async () => {} });
  const said: string[] = [];
  const opts = t.opts(evening('2026-11-24'), { provider, say: (l) => said.push(l) });
  expect((await refresh({ ...opts, now: evening('2026-11-23') })).outcome).toBe('published');
  return { t, opts, said, server };
}

/** The snapshot a rebuild from the source publishes (`build --source`, then `build --daily`). */
async function rebuilt(source: string, into: string) {
  await buildFromSource({ source, snapshots: into, keep: 5, maxBadShare: 0.01, threads: 1 });
  await appendDaily({ daily: source, snapshots: into, keep: 5, maxBadShare: 0.01 });
  return live(into);
}

describe('refresh --redo DAY', () => {
  it('fetches the day again, replaces its rows in the source, publishes, and names the funds and figures that changed', async () => {
    const { t, opts, said } = await refreshed('redo');
    const before = readCurrent(t.snapshots);
    // The provider corrected BBBBX's close of the 23rd.
    (server as FakeEodhd).faults.set('bulk', [
      {
        body: FIXTURE.replace(
          'BBBBX,US,2026-11-23,11.40,11.40,11.40,11.40,11.40',
          'BBBBX,US,2026-11-23,11.60,11.60,11.60,11.60,11.60',
        ),
      },
    ]);
    const r = await redo({ ...opts, redo: parseDay('2026-11-23') as number });
    expect(r.days).toEqual(['2026-11-23']);
    expect(r.id).not.toBe(before);
    expect(readCurrent(t.snapshots)).toBe(r.id);
    expect(r.changed.map((c) => c.code)).toEqual(['BBBBX']);
    const oneDay = r.changed[0].changes.find((c) => c.figure === 'return_1d');
    expect(oneDay).toBeDefined();
    expect(Number(oneDay?.new) - Number(oneDay?.old)).toBeCloseTo(
      (0.2 / (11 + (HISTORY.length - 1) * 0.01)) * 100,
      3,
    );
    expect(changeLines(r)[1]).toMatch(/^ {2}BBBBX: .*return_1d \S+ → \S+/);
    expect(readFileSync(join(t.source, 'daily', '2026-11-23.csv'), 'utf8')).toContain(
      'BBBBX,2026-11-23,11.60',
    );
    // What it replaced is kept, with the account of the changes.
    expect(readdirSync(join(r.kept, 'daily'))).toEqual(['2026-11-23.csv']);
    expect(JSON.parse(readFileSync(join(r.kept, 'changes.json'), 'utf8')).changed[0].code).toBe('BBBBX');
    expectSameColumns(await rebuilt(t.source, join(t.root, 'rebuilt')), await live(t.snapshots));
    expect(said.join('\n')).not.toContain(TOKEN);
  });

  it('a day inside the price files: their rows from that day on give way to the fetched days', async () => {
    const { t, opts } = await refreshed('redo-prices');
    const last = (i: number) => (10 + i + (HISTORY.length - 1) * 0.01).toFixed(2);
    let friday = 'Code,Ex,Date,Open,High,Low,Close,Adjusted_close,Volume\n';
    CODES.forEach((c, i) => {
      const close = c === 'CCCCX' ? '12.00' : last(i);
      friday += `${c},US,2026-11-20,${close},${close},${close},${close},${close},0\n`;
    });
    friday += 'KKKKX,US,2026-11-20,20.04,20.04,20.04,20.04,20.04,0\n';
    (server as FakeEodhd).faults.set('bulk', [{ body: friday }]);
    const r = await redo({ ...opts, redo: parseDay('2026-11-20') as number });
    expect(r.days).toEqual(['2026-11-20', '2026-11-23']);
    expect(r.changed.map((c) => c.code)).toEqual(['CCCCX']);
    const prices = readFileSync(join(t.source, 'prices', 'AAAAX.csv'), 'utf8');
    expect(prices).not.toContain('2026-11-20');
    expect(readFileSync(join(r.kept, 'prices', 'AAAAX.csv'), 'utf8')).toContain('2026-11-20');
    expect(readFileSync(join(t.source, 'daily', '2026-11-20.csv'), 'utf8')).toContain(
      'CCCCX,2026-11-20,12.00',
    );
    expectSameColumns(await rebuilt(t.source, join(t.root, 'rebuilt')), await live(t.snapshots));
  });

  it('refuses a day after the live as_of, and a day the NYSE was closed', async () => {
    const { opts } = await refreshed('redo-bad');
    await expect(redo({ ...opts, redo: parseDay('2026-11-24') as number })).rejects.toThrow(
      /after the live snapshot's as_of 2026-11-23/,
    );
    await expect(redo({ ...opts, redo: parseDay('2026-11-21') as number })).rejects.toThrow(
      /the NYSE was closed/,
    );
  });
});

describe('after CURRENT is rolled back', () => {
  it('the next refresh fetches the days after the live as_of again and sets the source’s newer records aside', async () => {
    const t = await tenFunds(dir('rollback'));
    const first = readCurrent(t.snapshots) as string;
    dayFile(t.inbox, '2026-11-23', allAt(0));
    dayFile(t.inbox, '2026-11-24', allAt(0.1));
    expect((await refresh(t.opts(evening('2026-11-24')))).days).toEqual(['2026-11-23', '2026-11-24']);
    // The operator rolls back (docs/operating.md): the source now holds two days the live snapshot does not.
    setCurrent(t.snapshots, first);
    // The upstream job delivers a corrected 23rd; the 24th is not there (yet).
    dayFile(t.inbox, '2026-11-23', allAt(0.05));
    const said: string[] = [];
    const r = await refresh(t.opts(evening('2026-11-24'), { say: (l) => said.push(l) }));
    expect(r.outcome).toBe('published');
    expect(r.days).toEqual(['2026-11-23', '2026-11-24']);
    expect(r.asOf).toBe('2026-11-23');
    expect(
      said.some((l) =>
        /source held days after the live as_of 2026-11-20 \(CURRENT rolled back\?\): set aside/.test(l),
      ),
    ).toBe(true);
    expect(readdirSync(join(t.source, 'daily'))).toEqual(['2026-11-23.csv']);
    expect(readFileSync(join(t.source, 'daily', '2026-11-23.csv'), 'utf8')).toContain(
      `AAAAX,2026-11-23,${(10.45).toFixed(2)}`,
    );
    const aside = readdirSync(join(t.source, 'received')).find((n) =>
      n.startsWith('after-rollback-'),
    ) as string;
    expect(readdirSync(join(t.source, 'received', aside, 'daily')).sort()).toEqual([
      '2026-11-23.csv',
      '2026-11-24.csv',
    ]);
    expect(listSnapshots(t.snapshots).length).toBeGreaterThanOrEqual(3);
    expectSameColumns(await rebuilt(t.source, join(t.root, 'rebuilt')), await live(t.snapshots));
    expect(existsSync(join(t.inbox, '2026-11-23.csv'))).toBe(false);
    writeFileSync(join(t.root, 'done'), '');
  });
});
