/**
 * The parsers of server/pydantic/ against Pydantic itself: every case in
 * pydantic-cases.json is an input and what Pydantic answered for it (recorded by
 * record-cases.py from the pydantic named in the file), so the 422s a client gets
 * (C20) are FastAPI's, not our reading of them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type DateResult, parsePydanticDate, parsePydanticDateNumber } from './date.js';
import { parsePydanticInt, pydanticStrip } from './scalars.js';

type Answer = { ok: string | number } | { type: string; msg: string; ctx?: Record<string, unknown> };
/** A long input as [head, unit, times, tail]. */
type Input = string | [string, string, number, string];
interface Cases {
  pydantic: string;
  int: Array<[Input, Answer]>;
  date: Array<[Input, Answer]>;
  date_values: Array<[unknown, Answer]>;
  strip: Array<[string, string]>;
}

const cases = JSON.parse(readFileSync(new URL('./pydantic-cases.json', import.meta.url), 'utf8')) as Cases;
const expand = (i: Input) => (typeof i === 'string' ? i : i[0] + i[1].repeat(i[2]) + i[3]);
const label = (i: Input) => JSON.stringify(i).slice(0, 60);

const asAnswer = (r: DateResult): Answer =>
  r.ok ? { ok: r.value } : { type: r.type, msg: r.msg, ...(r.ctx ? { ctx: r.ctx } : {}) };

describe(`Pydantic ${cases.pydantic}'s lax readings, case by case`, () => {
  it.each(cases.int.map(([i, a]) => [label(i), expand(i), a] as const))('int from %s', (_, input, want) => {
    const got = parsePydanticInt(input);
    if ('ok' in want) {
      if (want.ok === 'big') expect(Math.abs(got as number)).toBeGreaterThanOrEqual(2 ** 53);
      else expect(got).toBe(want.ok);
    } else expect(got).toBe(want.type);
  });

  it.each(cases.date.map(([i, a]) => [label(i), expand(i), a] as const))('date from %s', (_, input, want) => {
    expect(asAnswer(parsePydanticDate(input))).toEqual(want);
  });

  it.each(
    cases.date_values
      .filter(([v]) => typeof v === 'number')
      .map(([v, a]) => [JSON.stringify(v), v as number, a] as const),
  )('date from the JSON number %s', (_, input, want) => {
    expect(asAnswer(parsePydanticDateNumber(input))).toEqual(want);
  });

  it.each(cases.strip.map(([s, want]) => [JSON.stringify(s), s, want] as const))(
    'strip %s',
    (_, input, want) => {
      expect(pydanticStrip(input)).toBe(want);
    },
  );
});
