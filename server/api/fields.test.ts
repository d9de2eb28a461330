/**
 * `fields` on the single and batch endpoints (C51, C54): the asked figures, in order,
 * after the keys naming the row, each the same string as the whole row's; bad names
 * a 422 listing the valid ones; no `fields`, the whole row as before.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PickedRowListSchema, PickedRowSchema } from '../../schemas/index.js';
import { syntheticServing } from '../../test/serving-snapshot.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import { ajv } from './ajv.js';
import type { Answer } from './answers.js';
import * as answers from './answers.js';

let dir: string;
let snap: ServingSnapshot;
let codes: string[];

beforeAll(async () => {
  ({ dir, snap, codes } = await syntheticServing());
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const json = (a: Answer) => {
  expect(a.status).toBe(200);
  return JSON.parse(typeof a.body === 'string' ? a.body : Buffer.from(a.body).toString('utf8'));
};
const valid = (schema: object, v: unknown) => expect(ajv.compile(schema)(v)).toBe(true);

describe('fields= on single and batch endpoints (C51)', () => {
  it('trailing: identity keys, then the figures in the order asked, extra_returns flattened', () => {
    const whole = json(answers.getTrailing(snap, codes[1], {}));
    const r = json(answers.getTrailing(snap, codes[1], { fields: 'return_5y,return_mtd, return_1d' }));
    valid(PickedRowSchema, r);
    expect(Object.keys(r)).toEqual(['code', 'market', 'as_of_date', 'return_5y', 'return_mtd', 'return_1d']);
    expect(r).toMatchObject({
      code: codes[1],
      as_of_date: whole.as_of_date,
      return_5y: whole.return_5y,
      return_mtd: whole.extra_returns.return_mtd,
      return_1d: whole.return_1d,
    });
    const asOf = json(answers.getTrailing(snap, codes[1], { as_of: whole.as_of_date, fields: 'return_1y' }));
    expect(Object.keys(asOf)).toEqual(['code', 'market', 'as_of_date', 'return_1y']);
  });

  it('fund and calendar rows pick their own fields', () => {
    expect(json(answers.getFund(snap, codes[0], { fields: 'type,name' }))).toEqual({
      code: codes[0],
      market: 'US',
      type: snap.lookup.cols.funds.type[0],
      name: snap.lookup.cols.funds.name[0],
    });
    const cal = json(answers.getCalendar(snap, codes[0], { fields: 'total_return' }));
    expect(Object.keys(cal)).toEqual(['code', 'market', 'year', 'total_return']);
  });

  it('batches take fields as a list in the body; rows in request order', () => {
    const body = JSON.stringify({ codes: [codes[3], codes[2]], fields: ['return_3y', 'return_1y'] });
    const rows = json(answers.trailingBatch(snap, body, 'application/json'));
    valid(PickedRowListSchema, rows);
    expect(rows.map((r: { code: string }) => r.code)).toEqual([codes[3], codes[2]]);
    expect(Object.keys(rows[0])).toEqual(['code', 'market', 'as_of_date', 'return_3y', 'return_1y']);
    const cal = json(
      answers.calendarBatch(
        snap,
        JSON.stringify({ codes: [codes[0]], fields: ['is_partial'] }),
        'application/json',
      ),
    );
    expect(Object.keys(cal[0])).toEqual(['code', 'market', 'year', 'is_partial']);
  });

  it('an unknown field is a 422 at fields listing the valid names, before a 404 (C23, C54)', () => {
    const a = answers.getTrailing(snap, 'NOPE', { fields: 'return_1y,alpha' });
    expect(a.status).toBe(422);
    const issue = a.status === 422 ? a.issues[0] : null;
    expect(issue).toMatchObject({ type: 'literal_error', loc: ['query', 'fields'] });
    expect(issue?.msg).toContain("'return_1d', 'return_1w'");
    const b = answers.trailingBatch(
      snap,
      JSON.stringify({ codes: [codes[0]], fields: ['return_8y'] }),
      'application/json',
    );
    expect(b.status === 422 ? b.issues[0] : null).toMatchObject({
      type: 'value_error',
      loc: ['body', 'fields'],
      msg: expect.stringContaining('return has no window 8y'),
    });
    const c = answers.getFund(snap, codes[0], { fields: 'volatility' });
    expect(c.status === 422 ? c.issues[0].msg : '').toContain("'name', 'country'");
  });
});
