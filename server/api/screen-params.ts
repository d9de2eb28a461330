/**
 * Query validation of the screen, compare and growth endpoints (C50–C56), in C20's
 * style: every bad value is a 422 issue at its parameter, and a name that is not a
 * figure lists the figures there are (C54). Figure names come from the snapshot's
 * column registry, so a server without risk figures says so by not listing them.
 */

import type { ListQuery } from '../../schemas/requests.js';
import {
  COMPARE_MAX_CODES,
  DEFAULT_FIGURES,
  GROWTH_INTERVALS,
  type GrowthInterval,
  SCREEN_LIMIT_MAX,
} from '../../schemas/screen.js';
import {
  geIssue,
  intIssue,
  type Loc,
  listLength,
  literalError,
  type ValidationIssue,
  valueError,
} from '../pydantic/messages.js';
import { parsePydanticInt, pydanticStrip } from '../pydantic/scalars.js';
import type { ScreenColumns } from '../screen/columns.js';
import { decodeScreenCursor, type ScreenCursor } from './cursor.js';
import { validateAsOf, validateCode, validateListQuery } from './validation.js';

type Params = Record<string, string | undefined>;
type Result<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

interface FigureFilter {
  readonly name: string;
  readonly min: number;
  readonly max: number;
}

export interface ScreenQuery {
  readonly meta: Pick<ListQuery, 'q' | 'type' | 'country' | 'exchange'>;
  readonly inactive: boolean | null;
  /** The figure sorted by; null: code order. */
  readonly sort: string | null;
  readonly desc: boolean;
  readonly fields: readonly string[];
  readonly filters: readonly FigureFilter[];
  readonly after: ScreenCursor | null;
  readonly limit: number;
}

/** `'a', 'b' or 'c'`: Pydantic's wording of a literal's choices. */
function choices(names: readonly string[]): string {
  const q = names.map((n) => `'${n}'`);
  return q.length === 1 ? q[0] : `${q.slice(0, -1).join(', ')} or ${q[q.length - 1]}`;
}

/**
 * The issue for a name that is not a figure: a known figure with a window it does
 * not have names that figure's windows; anything else lists every figure.
 */
function unknownFigure(names: readonly string[], loc: Loc, input: string, name: string): ValidationIssue {
  const m = /^(.+)_([0-9]+[a-z])$/.exec(name);
  if (m !== null) {
    const windows = names.filter(
      (n) => n.startsWith(`${m[1]}_`) && /^[0-9]+[a-z]$/.test(n.slice(m[1].length + 1)),
    );
    if (windows.length > 0) {
      const list = windows.map((n) => n.slice(m[1].length + 1)).join(', ');
      return valueError(loc, input, `${m[1]} has no window ${m[2]}; its windows are ${list}`);
    }
  }
  return literalError(loc, input, choices(names));
}

/** `fields`: figure names, in order, each once; absent → the defaults. */
function parseFields(
  cols: ScreenColumns,
  raw: string | undefined,
  loc: Loc,
  issues: ValidationIssue[],
): string[] {
  if (raw === undefined) return DEFAULT_FIGURES.filter((n) => cols.has(n));
  return parseFieldList(cols.names, raw, loc, issues);
}

/**
 * A `fields` list (comma-separated text, or a JSON body's array): names of `names`, in
 * the order given, each once (C51).
 */
export function parseFieldList(
  names: readonly string[],
  raw: string | readonly string[],
  loc: Loc,
  issues: ValidationIssue[],
): string[] {
  const out: string[] = [];
  for (const part of typeof raw === 'string' ? raw.split(',') : raw) {
    const name = part.trim();
    if (name === '') continue;
    if (!names.includes(name))
      issues.push(unknownFigure(names, loc, typeof raw === 'string' ? raw : name, name));
    else if (out.includes(name)) issues.push(valueError(loc, raw, `${name} is asked for twice`));
    else out.push(name);
  }
  return out;
}

const TRUE = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

/** A query boolean as Pydantic's lax mode reads one. */
function parseBool(raw: string, loc: Loc, issues: ValidationIssue[]): boolean | null {
  const s = raw.trim().toLowerCase();
  if (TRUE.has(s)) return true;
  if (FALSE.has(s)) return false;
  issues.push({
    type: 'bool_parsing',
    loc,
    msg: 'Input should be a valid boolean, unable to interpret input',
    input: raw,
  });
  return null;
}

/** A filter bound: a finite decimal number. */
function parseBound(raw: string, loc: Loc, issues: ValidationIssue[]): number | null {
  const s = raw.trim();
  const n = s === '' ? Number.NaN : Number(s);
  if (Number.isFinite(n)) return n;
  issues.push(
    Number.isNaN(n)
      ? {
          type: 'float_parsing',
          loc,
          msg: 'Input should be a valid number, unable to parse string as a number',
          input: raw,
        }
      : { type: 'finite_number', loc, msg: 'Input should be a finite number', input: raw },
  );
  return null;
}

function limitOf(raw: string | undefined, issues: ValidationIssue[]): number {
  if (raw === undefined) return SCREEN_LIMIT_MAX;
  const n = parsePydanticInt(raw);
  if (typeof n !== 'number') issues.push(intIssue(['query', 'limit'], raw, n));
  else if (n < 1) issues.push(geIssue(['query', 'limit'], raw, 1));
  else return Math.min(n, SCREEN_LIMIT_MAX);
  return SCREEN_LIMIT_MAX;
}

const CURSOR_ERROR = 'cursor is not a next_cursor value of this API';

/** `sort`: a figure name, `-` first for descending; absent → code order. */
function parseSort(
  cols: ScreenColumns,
  raw: string | undefined,
  issues: ValidationIssue[],
): { sort: string | null; desc: boolean } {
  if (raw === undefined) return { sort: null, desc: false };
  const name = raw.startsWith('-') ? raw.slice(1) : raw;
  if (cols.has(name)) return { sort: name, desc: raw.startsWith('-') };
  issues.push(unknownFigure(cols.names, ['query', 'sort'], raw, name));
  return { sort: null, desc: false };
}

/** The `<figure>_min` and `<figure>_max` bounds, one filter per figure (C50). */
function parseFilters(cols: ScreenColumns, params: Params, issues: ValidationIssue[]): FigureFilter[] {
  const bounds = new Map<string, { min: number; max: number }>();
  for (const key of Object.keys(params)) {
    const raw = params[key];
    const m = /^(.+)_(min|max)$/.exec(key);
    if (m === null || raw === undefined) continue;
    const loc: Loc = ['query', key];
    if (!cols.has(m[1])) {
      issues.push(unknownFigure(cols.names, loc, raw, m[1]));
      continue;
    }
    const n = parseBound(raw, loc, issues);
    if (n === null) continue;
    const b = bounds.get(m[1]) ?? { min: Number.NEGATIVE_INFINITY, max: Number.POSITIVE_INFINITY };
    if (m[2] === 'min') b.min = n;
    else b.max = n;
    bounds.set(m[1], b);
  }
  const filters: FigureFilter[] = [];
  for (const [name, b] of bounds) {
    if (b.min > b.max) {
      issues.push(
        valueError(
          ['query', `${name}_min`],
          params[`${name}_min`],
          `${name}_min (${b.min}) is above ${name}_max (${b.max})`,
        ),
      );
    } else filters.push({ name, ...b });
  }
  return filters;
}

/** `cursor`: a next_cursor this API gave for the same sort (C52). */
function parseCursor(
  raw: string | undefined,
  sort: string | null,
  desc: boolean,
  issues: ValidationIssue[],
): ScreenCursor | null {
  if (raw === undefined) return null;
  const c = decodeScreenCursor(raw);
  const want = sort === null ? '' : `${desc ? '-' : ''}${sort}`;
  if (c === null) issues.push(valueError(['query', 'cursor'], raw, CURSOR_ERROR));
  else if (c.sort !== want)
    issues.push(
      valueError(
        ['query', 'cursor'],
        raw,
        `cursor was issued for ${c.sort === '' ? 'code order' : `sort=${c.sort}`}, not ${want === '' ? 'code order' : `sort=${want}`}`,
      ),
    );
  else return c;
  return null;
}

/** GET /v1/screen's query. */
export function validateScreenQuery(cols: ScreenColumns, params: Params): Result<ScreenQuery> {
  const issues: ValidationIssue[] = [];
  // The metadata filters are /v1/funds' own (C19), read by its validator.
  const list = validateListQuery({
    q: params.q,
    type: params.type,
    country: params.country,
    exchange: params.exchange,
  });
  if (!list.ok) issues.push(...list.issues);
  const inactive =
    params.inactive === undefined ? null : parseBool(params.inactive, ['query', 'inactive'], issues);
  const { sort, desc } = parseSort(cols, params.sort, issues);
  const filters = parseFilters(cols, params, issues);
  let fields = parseFields(cols, params.fields, ['query', 'fields'], issues);
  if (params.fields === undefined) {
    // By default a row shows what it was screened on, after the usual returns.
    for (const n of [sort, ...filters.map((f) => f.name)])
      if (n !== null && !fields.includes(n)) fields = [...fields, n];
  }
  const after = parseCursor(params.cursor, sort, desc, issues);
  const limit = limitOf(params.limit, issues);

  if (issues.length > 0 || !list.ok) return { ok: false, issues };
  const { q, type, country, exchange } = list.value;
  return {
    ok: true,
    value: { meta: { q, type, country, exchange }, inactive, sort, desc, fields, filters, after, limit },
  };
}

export interface CompareQuery {
  readonly codes: readonly string[];
  readonly fields: readonly string[];
}

/** GET /v1/compare's query (C53). */
export function validateCompareQuery(cols: ScreenColumns, params: Params): Result<CompareQuery> {
  const issues: ValidationIssue[] = [];
  const raw = params.codes;
  let codes: string[] = [];
  if (raw === undefined)
    issues.push({ type: 'missing', loc: ['query', 'codes'], msg: 'Field required', input: null });
  else {
    codes = raw
      .split(',')
      .map((c) => pydanticStrip(c))
      .filter((c) => c !== '');
    if (codes.length > COMPARE_MAX_CODES)
      issues.push(listLength(['query', 'codes'], codes, 'max', COMPARE_MAX_CODES));
    else if (codes.length === 0) issues.push(listLength(['query', 'codes'], codes, 'min', 1));
    else
      codes.forEach((c, k) => {
        issues.push(...validateCode(c, ['query', 'codes', k]));
      });
  }
  const fields = parseFields(cols, params.fields, ['query', 'fields'], issues);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: { codes, fields } };
}

export interface GrowthQuery {
  readonly code: string;
  readonly from: string | null;
  readonly to: string | null;
  readonly interval: GrowthInterval;
}

/** GET /v1/funds/{code}/growth's path and query (C55). */
export function validateGrowthQuery(code: string, params: Params): Result<GrowthQuery> {
  const issues: ValidationIssue[] = [...validateCode(code)];
  const from = validateAsOf(params.from, ['query', 'from']);
  const to = validateAsOf(params.to, ['query', 'to']);
  if (!from.ok) issues.push(...from.issues);
  if (!to.ok) issues.push(...to.issues);
  let interval: GrowthInterval = 'month';
  if (params.interval !== undefined) {
    const i = GROWTH_INTERVALS.find((x) => x === params.interval);
    if (i === undefined)
      issues.push(literalError(['query', 'interval'], params.interval, choices(GROWTH_INTERVALS)));
    else interval = i;
  }
  if (from.ok && to.ok && from.value !== null && to.value !== null && from.value > to.value)
    issues.push(valueError(['query', 'from'], params.from, `from (${from.value}) is after to (${to.value})`));
  if (issues.length > 0 || !from.ok || !to.ok) return { ok: false, issues };
  return { ok: true, value: { code, from: from.value, to: to.value, interval } };
}
