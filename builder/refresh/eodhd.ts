/**
 * The eodhd provider: EOD Historical Data's HTTP API, the dialect the builder already
 * reads for price files. What this relies on, from the provider's public pages:
 *
 * - Bulk API (https://eodhd.com/financial-apis/bulk-api-eod-splits-dividends): a whole
 *   exchange's day in one request, `GET /api/eod-bulk-last-day/US?api_token=…&fmt=csv&date=YYYY-MM-DD`
 *   with CSV columns `Code,Ex,Date,Open,High,Low,Close,Adjusted_close,Volume` (mutual
 *   funds carry their NAV in every price field and volume 0); `&type=dividends` gives
 *   `Code,Ex,Date,Dividend,Currency`, `&type=splits` gives `Code,Ex,Date,Split` with the
 *   split written `new/old` (`2.000000/1.000000` is two for one).
 * - End-of-day API (https://eodhd.com/financial-apis/api-for-historical-data-and-volumes):
 *   `GET /api/eod/{CODE}.US?api_token=…&fmt=csv`, `Date,Open,High,Low,Close,Adjusted_close,Volume`.
 * - Macroeconomic data, government bonds (https://eodhd.com/financial-apis/economic-data-api/,
 *   the GBOND list at https://eodhd.com/exchange/GBOND): yields through the same end-of-day
 *   endpoint on the virtual exchange GBOND, one call per request; `US3M.GBOND` is the
 *   "United States 3 Month Bill Yield", its prices the yield in percent (C41).
 * - Exchanges API, list of tickers (https://eodhd.com/financial-apis/exchanges-api-list-of-tickers-and-trading-hours):
 *   `GET /api/exchange-symbol-list/US?api_token=…&fmt=csv&type=fund|etf`, CSV columns
 *   `Code,Name,Country,Exchange,Currency,Type,Isin`; only tickers active in the last
 *   month are listed (`delisted=1` lists the others), so a fund gone from it is delisted.
 * - API limits (https://eodhd.com/financial-apis/api-limits): a per-minute request limit
 *   (answered 429) and a daily call limit reset at midnight GMT (answered 402); a bulk
 *   request costs 100 calls.
 * - The nightly maintenance window (the provider's status page): answers 503, or a
 *   page that is not CSV, for a while; waited out like a 5xx.
 *
 * The token travels only in the request URL. Every message and error names the URL
 * with `api_token` redacted, and never carries the provider's response body.
 */
import { type Day, formatDay } from '../../core/dates.js';
import { normalizeHeader, RecordReader } from '../source/csv.js';
import { DAILY_HEADER, dailyLine } from '../source/daily-file.js';
import { type FundsRow, fundsFileText } from '../source/funds.js';
import type { CallMeter } from './call-meter.js';
import { type Provider, ProviderError } from './provider.js';

export const DEFAULT_EODHD_URL = 'https://eodhd.com';

/** 402: the provider's daily call limit is spent; it resets at midnight GMT. */
export class DailyLimitReached extends ProviderError {
  constructor(shown: string) {
    super(
      `eodhd: the daily API limit is reached (402) at ${shown}; it resets at midnight GMT, the refresh will be retried`,
      true,
    );
    this.name = 'DailyLimitReached';
  }
}

export interface EodhdOptions {
  baseUrl: string;
  token: string;
  /** Per request (default 120 s: a bulk day of the US exchange is tens of MB). */
  timeoutMs?: number;
  /** Tries after the first for 429, 5xx, maintenance, timeouts and network errors (default 4). */
  retries?: number;
  /** Wait before retry `attempt` (0-based) after `status` (0: no answer). */
  backoffMs?: (attempt: number, status: number, retryAfterS: number | null) => number;
  sleep?: (ms: number) => Promise<void>;
  say?: (line: string) => void;
  /** Paces every request and counts its calls against the run's budget (--max-rate, --max-calls). */
  meter?: CallMeter;
}

/** The 3-month T-bill yield on EODHD's government-bond exchange. */
export const RATES_SYMBOL = 'US3M.GBOND';

/** API calls per request on the provider's count (its API limits page): a whole-exchange bulk request is 100. */
export const EODHD_CALLS = { list: 1, history: 1, bulk: 100 } as const;

/** A day from the bulk API: its prices, dividends and splits, each a whole-exchange request. */
export const EODHD_DAY_CALLS = 3 * EODHD_CALLS.bulk;

/** 429: the minute's limit (its Retry-After, else a minute); 5xx and timeouts: 5, 10, 20, 40 s. */
function defaultBackoffMs(attempt: number, status: number, retryAfterS: number | null): number {
  if (status === 429) return (retryAfterS ?? 60) * 1000;
  if (status === 503) return Math.min(15 * 60_000, 60_000 * 2 ** attempt);
  return 5000 * 2 ** attempt;
}

/** A URL as it may be printed: the token replaced. */
export function redactToken(url: string): string {
  return url.replace(/([?&]api_token=)[^&#]*/gi, '$1REDACTED');
}

const encoder = new TextEncoder();

/**
 * GET one API path as text, with the retries the provider's answers call for; null
 * for a 404 when `missing` allows it (a ticker the provider does not know).
 */
interface EodhdGet {
  (path: string, query: Record<string, string>): Promise<string>;
  (path: string, query: Record<string, string>, missing: 'null'): Promise<string | null>;
}

export function eodhdProvider(opts: EodhdOptions): Provider {
  const get = eodhdGet(opts);
  let listed: Map<string, string[]> | null = null;
  const fundList = async (): Promise<Map<string, string[]>> => {
    listed ??= await symbols(get, false);
    return listed;
  };

  return {
    name: 'eodhd',
    async prepare() {
      await fundList();
    },
    async day(day: Day) {
      return bulkDay(get, await fundList(), formatDay(day));
    },
    async fundList() {
      const rows = await fundList();
      return encoder.encode(fundsFileText([...rows.values()].map((cells) => listRow(cells, false))));
    },
    async history(code: string) {
      const text = await get(`eod/${encodeURIComponent(code)}.US`, {}, 'null');
      return text === null || text.trim() === '' ? null : encoder.encode(text);
    },
    async rates() {
      const text = await get(`eod/${RATES_SYMBOL}`, {}, 'null');
      return text === null || text.trim() === '' ? null : encoder.encode(text);
    },
    async rawHistory(code: string) {
      const text = await get(`eod/${encodeURIComponent(code)}.US`, {}, 'null');
      return text === null ? null : encoder.encode(text);
    },
    async universe() {
      // Both lists: a fund that closed keeps its history (and turns inactive), as in a refresh.
      const active = await fundList();
      const delisted = await symbols(get, true);
      const all = [...active.values()].map((cells) => listRow(cells, false));
      for (const [code, cells] of delisted) if (!active.has(code)) all.push(listRow(cells, true));
      return encoder.encode(fundsFileText(all));
    },
    callCosts: {
      list: 2 * EODHD_CALLS.list,
      universe: 4 * EODHD_CALLS.list,
      history: 1,
      day: EODHD_DAY_CALLS,
    },
  };
}

/** The GET every request goes through: the meter's pace and budget, the retries and waits, the token redacted from what is said. */
function eodhdGet(opts: EodhdOptions): EodhdGet {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const retries = opts.retries ?? 4;
  const backoff = opts.backoffMs ?? defaultBackoffMs;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const say = opts.say ?? (() => {});
  const timeoutMs = opts.timeoutMs ?? 120_000;

  async function get(path: string, query: Record<string, string>): Promise<string>;
  async function get(path: string, query: Record<string, string>, missing: 'null'): Promise<string | null>;
  async function get(path: string, query: Record<string, string>, missing?: 'null'): Promise<string | null> {
    const params = new URLSearchParams({ ...query, fmt: 'csv' });
    const shown = `${base}/api/${path}?${params}`;
    params.set('api_token', opts.token);
    const url = `${base}/api/${path}?${params}`;
    const cost = path.startsWith('eod-bulk') ? EODHD_CALLS.bulk : 1;
    for (let attempt = 0; ; attempt++) {
      let status = 0;
      let retryAfter: number | null = null;
      let why: string;
      await opts.meter?.acquire(cost);
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
        status = res.status;
        const body = await res.text();
        const type = res.headers.get('content-type') ?? '';
        if (status === 200 && !/html/i.test(type)) return body;
        const ra = Number(res.headers.get('retry-after'));
        retryAfter = Number.isFinite(ra) && ra > 0 ? ra : null;
        if (status === 200) status = 503; // a maintenance page served as 200
        if (status === 401 || status === 403)
          throw new ProviderError(
            `eodhd refused the token (${status}) for ${shown}: check --token-file or FUNDRETURNS_EODHD_TOKEN`,
            false,
          );
        if (status === 402) throw new DailyLimitReached(shown);
        if (status === 404) {
          if (missing === 'null') return null;
          throw new ProviderError(`eodhd: ${shown} is not found (404)`, false);
        }
        why =
          status === 429
            ? 'the per-minute request limit (429)'
            : status === 503
              ? 'maintenance or overload (503)'
              : `a server error (${status})`;
        if (status < 500 && status !== 429)
          throw new ProviderError(`eodhd answered ${status} for ${shown}`, false);
      } catch (e) {
        if (e instanceof ProviderError) throw e;
        const name = (e as Error).name;
        why = name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : 'a network error';
        status = 0;
      }
      if (attempt >= retries)
        throw new ProviderError(`eodhd: ${shown} failed ${attempt + 1} times, last with ${why}`, true);
      const wait = backoff(attempt, status, retryAfter);
      say(`eodhd: ${why} at ${shown}; retry ${attempt + 1} of ${retries} in ${(wait / 1000).toFixed(0)} s`);
      await sleep(wait);
    }
  }
  return get;
}

/** The funds and ETFs of one symbol list: the current one, or (`delisted=1`) the tickers no longer traded. */
async function symbols(get: EodhdGet, delisted: boolean): Promise<Map<string, string[]>> {
  const rows = new Map<string, string[]>();
  for (const type of ['fund', 'etf']) {
    const text = await get('exchange-symbol-list/US', delisted ? { type, delisted: '1' } : { type });
    const table = readCsv(text, ['code', 'type']);
    const which = `${delisted ? 'delisted ' : ''}${type}`;
    if (table === null)
      throw new ProviderError(`eodhd: the ${which} symbol list has no Code and Type columns`, true);
    const col = (n: string): number => table.header.indexOf(n);
    const want = ['code', 'name', 'country', 'exchange', 'currency', 'type', 'isin'].map(col);
    for (const r of table.rows) {
      const cells = want.map((i) => (i < 0 ? '' : (r[i] ?? '')));
      // The list names mutual funds `FUND` (and on some pages `Mutual Fund`).
      if (/^mutual fund$/i.test(cells[5])) cells[5] = 'FUND';
      cells[5] = cells[5].toUpperCase();
      if (cells[5] === 'FUND' || cells[5] === 'ETF') rows.set(cells[0], cells);
    }
  }
  return rows;
}

/** A day from the bulk API (prices, dividends, splits) as a daily file of the listed funds' rows. */
async function bulkDay(
  get: EodhdGet,
  funds: ReadonlyMap<string, string[]>,
  date: string,
): Promise<Uint8Array> {
  const eod = readCsv(await get('eod-bulk-last-day/US', { date }), ['code', 'date', 'close']);
  if (eod === null || eod.rows.length === 0)
    throw new ProviderError(`eodhd: the bulk file for ${date} is empty (not published yet?)`, true);
  const div = readCsv(await get('eod-bulk-last-day/US', { date, type: 'dividends' }), ['code', 'dividend']);
  const spl = readCsv(await get('eod-bulk-last-day/US', { date, type: 'splits' }), ['code', 'split']);
  const dividends = byCode(div, 'dividend', date);
  const splits = byCode(spl, 'split', date);
  const h = eod.header;
  const [c, d, cl, adj] = ['code', 'date', 'close', 'adjusted_close'].map((n) => h.indexOf(n));
  let out = DAILY_HEADER;
  for (const r of eod.rows) {
    const code = r[c];
    if (!funds.has(code)) continue;
    out += dailyLine({
      code,
      date: r[d],
      close: r[cl],
      adjClose: adj < 0 ? '' : r[adj],
      dividend: dividends.get(code) ?? '',
      split: splitRatio(splits.get(code)),
    });
  }
  return encoder.encode(out);
}

/** `2.000000/1.000000` → 2 (shares after / before, C37); blank when there is none. */
export function splitRatio(text: string | undefined): string {
  if (text === undefined || text === '') return '';
  const m = /^\s*([0-9.]+)\s*[/:]\s*([0-9.]+)\s*$/.exec(text);
  if (m === null) return text; // left for the daily reader to refuse with its reason
  const r = Number(m[1]) / Number(m[2]);
  return Number.isFinite(r) && r > 0 ? String(r) : text;
}

function byCode(table: CsvTable | null, column: string, date: string): Map<string, string> {
  const out = new Map<string, string>();
  if (table === null) return out;
  const c = table.header.indexOf('code');
  const v = table.header.indexOf(column);
  const d = table.header.indexOf('date');
  for (const r of table.rows) if (d < 0 || r[d] === date) out.set(r[c], r[v] ?? '');
  return out;
}

interface CsvTable {
  header: string[];
  rows: string[][];
}

/** A small CSV as rows of cells (header lower-cased), or null when `required` columns are missing. */
function readCsv(text: string, required: string[]): CsvTable | null {
  const r = new RecordReader(encoder.encode(text));
  if (!r.next()) return required.length === 0 ? { header: [], rows: [] } : null;
  const header = normalizeHeader(r.texts());
  if (required.some((n) => !header.includes(n))) return null;
  const rows: string[][] = [];
  while (r.next()) rows.push(r.texts());
  return { header, rows };
}

/** A fund list's cells (Code, Name, Country, Exchange, Currency, Type, Isin) as a funds.csv row. */
function listRow(cells: readonly string[], isInactive: boolean): FundsRow {
  const [code, name, country, exchange, currency, type, isin] = cells;
  return { code, name, country, exchange, currency, type, isin, isInactive, inactiveDate: null };
}
