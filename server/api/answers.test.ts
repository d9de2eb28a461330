/**
 * The transport-free answers (answers.ts) in-process, on a small synthetic snapshot:
 * what REST routes and MCP tools both send, without a server, a socket or a gate.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fund, FundList, TrailingReturns } from '../../schemas/index.js';
import { FundListSchema, FundSchema, TrailingReturnsSchema } from '../../schemas/index.js';
import { syntheticServing } from '../../test/serving-snapshot.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import { ajv } from './ajv.js';
import type { Answer } from './answers.js';
import * as answers from './answers.js';
import { encodeCursor } from './cursor.js';

let dir: string;
let snap: ServingSnapshot;
let codes: string[];

beforeAll(async () => {
  ({ dir, snap, codes } = await syntheticServing());
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const text = (a: Answer) => (typeof a.body === 'string' ? a.body : Buffer.from(a.body).toString('utf8'));
const json = (a: Answer) => JSON.parse(text(a)) as unknown;
const issues = (a: Answer) => (a.status === 422 ? a.issues.map((i) => [i.type, ...i.loc]) : a.status);
const valid = (schema: object, v: unknown) => {
  const check = ajv.compile(schema);
  expect(check(v), JSON.stringify(check.errors)).toBe(true);
};

describe('answers, transport-free (what REST and MCP both send)', () => {
  it('a fund by code is its metadata row; an unknown code a 404 naming the code in another case', () => {
    const a = answers.getFund(snap, codes[0], {});
    expect(a.status).toBe(200);
    valid(FundSchema, json(a));
    expect((json(a) as Fund).code).toBe(codes[0]);
    const miss = answers.getFund(snap, codes[0].toLowerCase(), {});
    expect(miss).toMatchObject({
      status: 404,
      detail: `No fund with code ${codes[0].toLowerCase()} (codes are case-sensitive: ${codes[0]} exists)`,
    });
    expect(json(miss)).toEqual({ detail: (miss as { detail: string }).detail });
  });

  it('an impossible code is a 422 at the path, not a 404 (C15)', () => {
    expect(issues(answers.getFund(snap, '', {}))).toEqual([['string_too_short', 'path', 'code']]);
    expect(issues(answers.getFund(snap, 'x'.repeat(33), {}))).toEqual([['string_too_long', 'path', 'code']]);
    expect(issues(answers.getTrailing(snap, null, {}))).toEqual([
      ['string_pattern_mismatch', 'path', 'code'],
    ]);
  });

  it('trailing returns: latest by default, anchored on as_of, 404 before the first observation (C3)', () => {
    const latest = answers.getTrailing(snap, codes[0], {});
    expect(latest.status).toBe(200);
    valid(TrailingReturnsSchema, json(latest));
    const day = (json(latest) as TrailingReturns).as_of_date;
    // Computed from the series on demand (the synthetic latest row is not: compare shapes only).
    const same = answers.getTrailing(snap, codes[0], { as_of: day });
    valid(TrailingReturnsSchema, json(same));
    expect((json(same) as TrailingReturns).as_of_date).toBe(day);
    expect(answers.getTrailing(snap, codes[0], { as_of: '1901-01-01' })).toMatchObject({
      status: 404,
      detail: `Fund ${codes[0]} has no data on or before 1901-01-01`,
    });
    expect(issues(answers.getTrailing(snap, codes[0], { as_of: '2024-02-30' }))).toEqual([
      ['date_from_datetime_parsing', 'query', 'as_of'],
    ]);
  });

  it('calendar returns: a year outside 1900..2100 is a 422, a year without a row a 404 (C12, C13)', () => {
    expect(issues(answers.getCalendar(snap, codes[0], { year: '1899' }))).toEqual([
      ['greater_than_equal', 'query', 'year'],
    ]);
    expect(answers.getCalendar(snap, codes[0], { year: '1950' })).toMatchObject({ status: 404 });
    expect(answers.getCalendar(snap, codes[0], {}).status).toBe(200);
  });

  it('lists funds in pages whose next_cursor continues strictly after the last code (C18)', () => {
    const first = json(answers.listFunds(snap, { limit: '2' })) as FundList;
    valid(FundListSchema, first);
    expect(first.data.map((f) => f.code)).toEqual(codes.slice(0, 2));
    expect(first.next_cursor).toBe(encodeCursor(codes[1]));
    const next = json(answers.listFunds(snap, { limit: '2', cursor: first.next_cursor! })) as FundList;
    expect(next.data.map((f) => f.code)).toEqual(codes.slice(2, 4));
    // A cursor without the version byte is not one this API issues.
    expect(issues(answers.listFunds(snap, { cursor: 'VlRJ' }))).toEqual([['value_error', 'query', 'cursor']]);
    expect(issues(answers.listFunds(snap, { limit: '0' }))).toEqual([
      ['greater_than_equal', 'query', 'limit'],
    ]);
  });

  it('a batch answers in request order, a repeat once, misses left out (C16), whichever path reads the body', () => {
    const asked = [codes[3], 'NOPE', codes[1], codes[3]];
    const plain = answers.trailingBatch(
      snap,
      Buffer.from(JSON.stringify({ codes: asked })),
      'application/json',
    );
    const general = answers.trailingBatch(
      snap,
      JSON.stringify({ codes: asked, market: 'US' }),
      'application/json',
    );
    expect((json(plain) as TrailingReturns[]).map((r) => r.code)).toEqual([codes[3], codes[1]]);
    expect(json(general)).toEqual(json(plain));
    const cal = answers.calendarBatch(snap, JSON.stringify({ codes: asked, year: 1950 }), 'application/json');
    expect(json(cal)).toEqual([]);
  });

  it('a batch body that is not a JSON object of 1..100 codes is a 422 listing why (C14, C21)', () => {
    const many = JSON.stringify({ codes: Array.from({ length: 101 }, (_, i) => `C${i}`) });
    expect(issues(answers.trailingBatch(snap, many, 'application/json'))).toEqual([
      ['too_long', 'body', 'codes'],
    ]);
    expect(issues(answers.trailingBatch(snap, '{"codes":', 'application/json'))).toEqual([
      ['json_invalid', 'body', 9],
    ]);
    expect(issues(answers.calendarBatch(snap, '{"codes":["A"]}', 'text/plain'))).toEqual([
      ['model_attributes_type', 'body'],
    ]);
    expect(issues(answers.calendarBatch(snap, '{}', 'application/json'))).toEqual([
      ['missing', 'body', 'codes'],
    ]);
  });
});
