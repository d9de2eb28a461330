/**
 * The JSON rows exactly as the API serves them (SPEC 2, C1, C8, C9, C17), built as
 * strings: the server pre-serializes the latest rows once per snapshot and the CLI's
 * `query` prints the same bytes, so both agree by construction.
 */
import { type Day, formatDay } from './dates.js';
import { percentJson } from './format.js';
import {
  type CalendarFigures,
  type FundRecord,
  TOP_LEVEL_TRAILING,
  TRAILING_KEYS,
  type TrailingFigures,
} from './types.js';

/** C34: market is accepted everywhere and always echoed as US. */
export const MARKET = 'US';

const MARKET_JSON = JSON.stringify(MARKET);

function str(v: string | null): string {
  return v === null ? 'null' : JSON.stringify(v);
}

function day(v: Day | null): string {
  return v === null ? 'null' : `"${formatDay(v)}"`;
}

/** Pre-built `,"return_1d":` … fragments so a row is a run of concatenations. */
const KEY_FRAGMENTS = TRAILING_KEYS.map((k) => `,"${k}":`);

export function trailingRowJson(code: string, f: TrailingFigures): string {
  let s = `{"code":${JSON.stringify(code)},"market":${MARKET_JSON},"as_of_date":"${formatDay(f.asOf)}"`;
  const v = f.values;
  for (let k = 0; k < TOP_LEVEL_TRAILING; k++) s += KEY_FRAGMENTS[k] + percentJson(v[k]);
  s += ',"extra_returns":{';
  for (let k = TOP_LEVEL_TRAILING; k < TRAILING_KEYS.length; k++) {
    // The first extra key has no leading comma inside the object.
    s += (k === TOP_LEVEL_TRAILING ? KEY_FRAGMENTS[k].slice(1) : KEY_FRAGMENTS[k]) + percentJson(v[k]);
  }
  return `${s}}}`;
}

export function calendarRowJson(code: string, f: CalendarFigures): string {
  return (
    `{"code":${JSON.stringify(code)},"market":${MARKET_JSON},"year":${f.year}` +
    `,"total_return":${percentJson(f.totalReturn)},"start_date":"${formatDay(f.startDate)}"` +
    `,"end_date":"${formatDay(f.endDate)}","is_partial":${f.isPartial}}`
  );
}

/** A Fund (C17): every key present; min/max return dates are the series' ends. */
export function fundJson(f: FundRecord, minReturnDate: Day | null, maxReturnDate: Day | null): string {
  return (
    `{"code":${JSON.stringify(f.code)},"market":${MARKET_JSON},"name":${str(f.name)}` +
    `,"country":${str(f.country)},"exchange":${str(f.exchange)},"currency":${str(f.currency)}` +
    `,"type":"${f.type}","isin":${str(f.isin)},"is_inactive":${f.isInactive}` +
    `,"inactive_date":${day(f.inactiveDate)},"min_return_date":${day(minReturnDate)}` +
    `,"max_return_date":${day(maxReturnDate)}}`
  );
}
