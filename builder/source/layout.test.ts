import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listDailyFiles, sourcePaths } from './layout.js';

const root = mkdtempSync(join(tmpdir(), 'fr-layout-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('source layout (C35, C37)', () => {
  it('lists prices/<Code>.csv as code → path in code order, setting aside other names', () => {
    const dir = join(root, 'src1');
    mkdirSync(join(dir, 'prices', 'nested.csv'), { recursive: true });
    for (const f of ['SPY.csv', 'AGG.csv', 'BRK.B.csv', 'notes.txt', '.csv', `${'X'.repeat(33)}.csv`]) {
      writeFileSync(join(dir, 'prices', f), '');
    }
    const s = sourcePaths(dir);
    expect(s.fundsFile).toBe(join(dir, 'funds.csv'));
    expect(s.pricesDir).toBe(join(dir, 'prices'));
    expect([...s.priceFiles]).toEqual([
      ['AGG', join(dir, 'prices', 'AGG.csv')],
      ['BRK.B', join(dir, 'prices', 'BRK.B.csv')],
      ['SPY', join(dir, 'prices', 'SPY.csv')],
    ]);
    expect(s.ignored).toEqual(['.csv', `${'X'.repeat(33)}.csv`, 'nested.csv', 'notes.txt']);
  });

  it('a source without a prices folder has no price files (the build reports funds without prices)', () => {
    const dir = join(root, 'src2');
    mkdirSync(dir);
    expect(sourcePaths(dir).priceFiles.size).toBe(0);
  });

  it('lists daily/YYYY-MM-DD.csv by date, ignoring other names and impossible dates (C37)', () => {
    const dir = join(root, 'src3');
    mkdirSync(join(dir, 'daily'), { recursive: true });
    for (const f of [
      '2020-01-03.csv',
      '2019-12-31.csv',
      '2020-01-02.csv',
      '2015-02-29.csv',
      'x.csv',
      '2020-01-04.txt',
    ]) {
      writeFileSync(join(dir, 'daily', f), '');
    }
    expect(listDailyFiles(dir)).toEqual([
      join(dir, 'daily', '2019-12-31.csv'),
      join(dir, 'daily', '2020-01-02.csv'),
      join(dir, 'daily', '2020-01-03.csv'),
    ]);
    expect(listDailyFiles(join(root, 'src2'))).toEqual([]);
  });
});
