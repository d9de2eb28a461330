/**
 * The synthetic provider: the next trading days of a generated universe, from the
 * same generator and seed (generator.json in the source directory), so the demo never
 * goes stale. A universe generated to --to with a later --horizon gains the funds
 * launched after --to and loses those whose InactiveDate comes, day by day; a refresh
 * over those days publishes what `generate --to <that day>` with the same horizon
 * would build.
 */
import { type Day, formatDay } from '../../core/dates.js';
import { ratesFileText } from '../generate/rates.js';
import { readGeneratorRecord } from '../generate/record.js';
import { allocSeries, dailyRowText, priceFileText, simulateFund } from '../generate/series.js';
import { dayIndexOnOrBefore, fundsCsv, planUniverse, type Universe } from '../generate/universe.js';
import { DAILY_HEADER } from '../source/daily-file.js';
import { type Provider, ProviderError } from './provider.js';

const encoder = new TextEncoder();

export function syntheticProvider(source: string): Provider {
  const record = readGeneratorRecord(source);
  let universe: Universe | null = null;
  const texts = new Map<Day, string>();
  const plan = (): Universe => {
    universe ??= planUniverse(record.seed, record.funds, record.from, record.horizon);
    return universe;
  };
  const indexOf = (day: Day): number => {
    const u = plan();
    const k = dayIndexOnOrBefore(u, day);
    if (day > u.days[u.days.length - 1] || k < 0 || u.days[k] !== day)
      throw new ProviderError(
        `the synthetic universe in ${source} is planned to ${formatDay(record.horizon)}; it has no ${formatDay(day)} ` +
          '(generate it again with a later --horizon)',
        false,
      );
    return k;
  };
  return {
    name: 'synthetic',
    async prepare(days) {
      // One simulation of every fund up to the last day asked for gives every day's rows.
      const u = plan();
      const want = new Map<number, string[]>();
      for (const d of days) want.set(indexOf(d), []);
      const last = Math.max(...want.keys());
      const first = Math.min(...want.keys());
      const s = allocSeries(u.days.length);
      for (const p of u.priced) {
        if (p.firstIdx > last) continue;
        simulateFund(u, p, s, last);
        for (let i = s.length - 1; i >= 0 && s.dayIdx[i] >= first; i--)
          want.get(s.dayIdx[i])?.push(dailyRowText(u, p.code, s, i));
      }
      for (const [k, rows] of want) texts.set(u.days[k], DAILY_HEADER + rows.join(''));
    },
    async day(day) {
      if (!texts.has(day)) await this.prepare?.([day]);
      const text = texts.get(day);
      return text === undefined ? null : encoder.encode(text);
    },
    async fundList(day) {
      return encoder.encode(fundsCsv(plan(), indexOf(day)));
    },
    async rates(day) {
      return encoder.encode(ratesFileText(plan(), indexOf(day)));
    },
    async history(code, day) {
      const u = plan();
      const p = u.priced.find((x) => x.code === code);
      const k = indexOf(day);
      if (p === undefined || p.firstIdx > k) return null;
      const s = simulateFund(u, p, undefined, k);
      return encoder.encode(priceFileText(u, s, p.type === 'ETF', k + 1));
    },
  };
}
