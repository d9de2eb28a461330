/**
 * The work of one thread: simulate and write the price files of every fund whose
 * position (in code order) is congruent to `shard` modulo `shards`. Interleaving
 * rather than contiguous ranges spreads long and short histories evenly.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Day } from '../../core/dates.js';
import { allocSeries, dailyRowText, priceFileText, simulateFund } from './series.js';
import { dayIndexOnOrBefore, planUniverse, type Universe } from './universe.js';

export interface ShardTask {
  readonly out: string;
  readonly funds: number;
  readonly seed: number;
  readonly from: Day;
  readonly to: Day;
  /** The day the universe is planned to (≥ to); rows are written up to `to` only. */
  readonly horizon: Day;
  readonly dailyDays: number;
  readonly shard: number;
  readonly shards: number;
}

export interface ShardResult {
  readonly priceRows: number;
  readonly bytes: number;
  /** Per daily day (oldest first): fund positions and their rows, positions ascending. */
  readonly daily: { positions: number[]; rows: string[] }[];
}

export function runShard(task: ShardTask, onFund: () => void, universe?: Universe): ShardResult {
  const u = universe ?? planUniverse(task.seed, task.funds, task.from, task.horizon);
  const endIdx = dayIndexOnOrBefore(u, task.to);
  const dailyStart = endIdx + 1 - task.dailyDays;
  const series = allocSeries(u.days.length);
  const daily = Array.from({ length: task.dailyDays }, () => ({
    positions: [] as number[],
    rows: [] as string[],
  }));
  const pricesDir = join(task.out, 'prices');
  let priceRows = 0;
  let bytes = 0;

  for (let pos = task.shard; pos < u.priced.length; pos += task.shards) {
    const plan = u.priced[pos];
    // Not launched yet on `to` (a universe planned to a later horizon).
    if (plan.firstIdx > endIdx) {
      onFund();
      continue;
    }
    simulateFund(u, plan, series, endIdx);
    const text = priceFileText(u, series, plan.type === 'ETF', dailyStart);
    writeFileSync(join(pricesDir, `${plan.code}.csv`), text);
    // Price files are pure ASCII, so characters are bytes.
    bytes += text.length;
    for (let i = series.length - 1; i >= 0 && series.dayIdx[i] >= dailyStart; i--) {
      const day = daily[series.dayIdx[i] - dailyStart];
      day.positions.push(pos);
      day.rows.push(dailyRowText(u, plan.code, series, i));
    }
    let kept = series.length;
    while (kept > 0 && series.dayIdx[kept - 1] >= dailyStart) kept--;
    priceRows += kept;
    onFund();
  }
  return { priceRows, bytes, daily };
}
