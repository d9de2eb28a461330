/**
 * `fields` on the single and batch endpoints (C51): the figures of a row to return,
 * in the order asked, after the keys that say whose row it is. Only a request that
 * asks for fields comes here; the default answers stay the prepared bytes.
 *
 * A row is picked from the full row the endpoint would send, so a picked figure is
 * the same string; `extra_returns` is flattened into the row (a picked row has no
 * nesting).
 */
import { TRAILING_KEYS } from '../../core/types.js';
import { CalendarReturnSchema, FundSchema } from '../../schemas/index.js';
import type { Loc, ValidationIssue } from '../pydantic/messages.js';
import { parseFieldList } from './screen-params.js';

export interface RowFields {
  /** Keys every row keeps, first. */
  readonly identity: readonly string[];
  /** The figures `fields` may name. */
  readonly figures: readonly string[];
}

/** The row's keys after its identity ones: a schema's required keys are the row's, in order. */
const after = (keys: readonly string[], identity: readonly string[]): RowFields => ({
  identity,
  figures: keys.filter((k) => !identity.includes(k)),
});

export const TRAILING_FIELDS: RowFields = {
  identity: ['code', 'market', 'as_of_date'],
  figures: TRAILING_KEYS,
};
export const CALENDAR_FIELDS = after(CalendarReturnSchema.required, ['code', 'market', 'year']);
export const FUND_FIELDS = after(FundSchema.required, ['code', 'market']);

/** The `fields` asked for, or null when absent; bad names go to `issues` (C54). */
export function fieldsOf(
  kind: RowFields,
  raw: unknown,
  loc: Loc,
  issues: ValidationIssue[],
): string[] | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw === 'string') return parseFieldList(kind.figures, raw, loc, issues);
  if (Array.isArray(raw) && raw.every((x) => typeof x === 'string'))
    return parseFieldList(kind.figures, raw as string[], loc, issues);
  issues.push({ type: 'list_type', loc, msg: 'Input should be a valid list', input: raw });
  return null;
}

const decoder = new TextDecoder();

function pick(
  row: Record<string, unknown>,
  kind: RowFields,
  fields: readonly string[],
): Record<string, unknown> {
  const extra = (row.extra_returns ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of kind.identity) out[k] = row[k];
  for (const f of fields) out[f] = f in row ? row[f] : extra[f];
  return out;
}

const parse = (json: Uint8Array | string): unknown =>
  JSON.parse(typeof json === 'string' ? json : decoder.decode(json));

/** The row `json` reduced to its identity keys and `fields`, in that order. */
export function pickRow(json: Uint8Array | string, kind: RowFields, fields: readonly string[]): string {
  return JSON.stringify(pick(parse(json) as Record<string, unknown>, kind, fields));
}

/** A JSON array of rows, each picked. */
export function pickRows(rows: Uint8Array | string, kind: RowFields, fields: readonly string[]): string {
  return JSON.stringify((parse(rows) as Array<Record<string, unknown>>).map((r) => pick(r, kind, fields)));
}
