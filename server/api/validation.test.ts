import { describe, expect, it } from 'vitest';
import { encodeCursor } from './cursor.js';
import {
  isJsonContentType,
  type ValidationIssue,
  validateAsOf,
  validateCalendarBatchBody,
  validateCalendarParams,
  validateCode,
  validateFundParams,
  validateListQuery,
  validateTrailingBatchBody,
  validateTrailingParams,
  validateYear,
  validationErrorBody,
  validationErrorJson,
} from './validation.js';

const PATTERN = '^[^\\u0000-\\u001F\\u007F-\\u009F]*$';
const json = (v: unknown) => JSON.stringify(v);
/** The issues as a client reads them in the 422 (numbers echoed as Python writes them, then read back). */
const issuesOf = (r: { ok: boolean; issues?: unknown }) => {
  expect(r.ok).toBe(false);
  return (JSON.parse(validationErrorJson(r.issues as ValidationIssue[])) as { detail: unknown }).detail;
};

describe('validateListQuery (C19)', () => {
  it('defaults, trims q, caps limit at 1000', () => {
    expect(validateListQuery({})).toEqual({
      ok: true,
      value: { q: null, type: null, country: null, exchange: null, cursor: null, after: null, limit: 100 },
    });
    const r = validateListQuery({
      q: '  vanguard ',
      type: 'ETF',
      country: 'USA',
      exchange: 'NYSE',
      limit: '5000',
    });
    expect(r).toMatchObject({
      ok: true,
      value: { q: 'vanguard', type: 'ETF', country: 'USA', exchange: 'NYSE', limit: 1000 },
    });
    expect(validateListQuery({ q: '   ' })).toMatchObject({ ok: true, value: { q: null } });
  });

  it('coerces limit like Pydantic lax int', () => {
    for (const [raw, n] of [
      ['7', 7],
      [' 7 ', 7],
      ['+7', 7],
      ['7.0', 7],
      ['1_000', 1000],
    ] as const) {
      expect(validateListQuery({ limit: raw })).toMatchObject({ ok: true, value: { limit: n } });
    }
  });

  it('limit not an integer: int_parsing', () => {
    for (const raw of ['abc', '', '2.5', '1e3', '_1']) {
      expect(issuesOf(validateListQuery({ limit: raw }))).toEqual([
        {
          type: 'int_parsing',
          loc: ['query', 'limit'],
          msg: 'Input should be a valid integer, unable to parse string as an integer',
          input: raw,
        },
      ]);
    }
  });

  it('limit below 1: greater_than_equal with ctx', () => {
    expect(issuesOf(validateListQuery({ limit: '0' }))).toEqual([
      {
        type: 'greater_than_equal',
        loc: ['query', 'limit'],
        msg: 'Input should be greater than or equal to 1',
        input: '0',
        ctx: { ge: 1 },
      },
    ]);
  });

  it('q over 100 characters after trimming: string_too_long', () => {
    expect(validateListQuery({ q: ` ${'a'.repeat(100)} ` }).ok).toBe(true);
    const q = 'a'.repeat(101);
    expect(issuesOf(validateListQuery({ q }))).toEqual([
      {
        type: 'string_too_long',
        loc: ['query', 'q'],
        msg: 'String should have at most 100 characters',
        input: q,
        ctx: { max_length: 100 },
      },
    ]);
    // Python counts code points: 100 emoji are 100 characters.
    expect(validateListQuery({ q: '😀'.repeat(100) }).ok).toBe(true);
  });

  it('type other than ETF/FUND: literal_error', () => {
    expect(issuesOf(validateListQuery({ type: 'etf' }))).toEqual([
      {
        type: 'literal_error',
        loc: ['query', 'type'],
        msg: "Input should be 'ETF' or 'FUND'",
        input: 'etf',
        ctx: { expected: "'ETF' or 'FUND'" },
      },
    ]);
  });

  it('cursor round-trips; a foreign cursor is a 422 at query.cursor (C18)', () => {
    const cursor = encodeCursor('VTI');
    expect(validateListQuery({ cursor })).toMatchObject({ ok: true, value: { cursor, after: 'VTI' } });
    for (const bad of ['!!', 'VlRJ=', '', encodeCursor('a\u0001'), encodeCursor('x'.repeat(33))]) {
      const issues = issuesOf(validateListQuery({ cursor: bad })) as { type: string; loc: unknown }[];
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatchObject({ type: 'value_error', loc: ['query', 'cursor'], input: bad });
    }
  });

  it('lists every failure, in declaration order', () => {
    const issues = issuesOf(
      validateListQuery({ limit: '-1', q: 'x'.repeat(200), type: 'BOND', cursor: '***', unknown: 'ignored' }),
    ) as { loc: unknown }[];
    expect(issues.map((i) => i.loc)).toEqual([
      ['query', 'q'],
      ['query', 'type'],
      ['query', 'cursor'],
      ['query', 'limit'],
    ]);
  });
});

describe('validateCode (C15)', () => {
  it('accepts tickers, case and punctuation as they are', () => {
    expect(validateCode('VTI')).toEqual([]);
    expect(validateCode('brk.b')).toEqual([]);
    expect(validateCode('x'.repeat(32))).toEqual([]);
  });

  it('empty, too long, control characters', () => {
    expect(validateCode('')).toEqual([
      {
        type: 'string_too_short',
        loc: ['path', 'code'],
        msg: 'String should have at least 1 character',
        input: '',
        ctx: { min_length: 1 },
      },
    ]);
    const long = 'x'.repeat(33);
    expect(validateCode(long)).toEqual([
      {
        type: 'string_too_long',
        loc: ['path', 'code'],
        msg: 'String should have at most 32 characters',
        input: long,
        ctx: { max_length: 32 },
      },
    ]);
    for (const bad of ['A\u0000', 'A\nB', 'A\u007f', 'A\u0085']) {
      expect(validateCode(bad)).toEqual([
        {
          type: 'string_pattern_mismatch',
          loc: ['path', 'code'],
          msg: `String should match pattern '${PATTERN}'`,
          input: bad,
          ctx: { pattern: PATTERN },
        },
      ]);
    }
  });
});

describe('dates (Pydantic lax date, speedate messages)', () => {
  it.each([
    ['2024-02-30', 'day value is outside expected range'],
    ['2023-02-29', 'day value is outside expected range'],
    ['2024-13-01', 'month value is outside expected range of 1-12'],
    ['abc', 'input is too short'],
    ['', 'input is too short'],
    ['2024-1-1', 'input is too short'],
    ['2024/01/01', 'invalid date separator, expected `-`'],
    ['20x4-01-01', 'invalid character in year'],
    ['2024-0a-01', 'invalid character in month'],
    ['2024-01-0a', 'invalid character in day'],
    ['2024-01-01x', 'invalid datetime separator, expected `T`, `t`, `_` or space'],
    ['2024-01-01T24:00', 'hour value is outside expected range of 0-23'],
    ['2024-01-01T00:00:00+0', 'invalid timezone hour'],
    ['2024-01-01T00:00:00+01', 'invalid timezone minute'],
    ['2024-01-01T00:00:00 extra', 'invalid timezone sign'],
    // Five-digit years: speedate reads 1000, then finds a digit where `-` belongs.
    ['10000-01-01', 'invalid date separator, expected `-`'],
    ['10000-01-01T00:00:00', 'invalid date separator, expected `-`'],
    // A millisecond timestamp past 9999-12-31.
    ['253402300800000', 'dates after 9999 are not supported as unix timestamps'],
  ])('%j → date_from_datetime_parsing: %s, the reason in ctx.error too', (input, reason) => {
    expect(validateAsOf(input)).toEqual({
      ok: false,
      issues: [
        {
          type: 'date_from_datetime_parsing',
          loc: ['query', 'as_of'],
          msg: `Input should be a valid date or datetime, ${reason}`,
          input,
          ctx: { error: reason },
        },
      ],
    });
  });

  it('years 0001–1599 are dates like any other (a 404 later, C3); year 0 is date_parsing', () => {
    expect(validateAsOf('1500-06-01')).toEqual({ ok: true, value: '1500-06-01' });
    expect(validateAsOf('0001-01-01')).toEqual({ ok: true, value: '0001-01-01' });
    expect(issuesOf(validateAsOf('0000-01-01'))).toEqual([
      {
        type: 'date_parsing',
        loc: ['query', 'as_of'],
        msg: 'Input should be a valid date in the format YYYY-MM-DD, year 0 is out of range',
        input: '0000-01-01',
        ctx: { error: 'year 0 is out of range' },
      },
    ]);
  });

  it('a timestamp off midnight, to the millisecond, is date_from_datetime_inexact', () => {
    for (const input of ['1706918400001', '1706918400999', '-20000000000', '1706918400.5']) {
      expect(issuesOf(validateAsOf(input))).toMatchObject([{ type: 'date_from_datetime_inexact', input }]);
    }
    expect(validateAsOf('1706918400000')).toEqual({ ok: true, value: '2024-02-03' });
  });

  it('a datetime that is not midnight: date_from_datetime_inexact', () => {
    expect(issuesOf(validateAsOf('2024-01-01T09:30'))).toEqual([
      {
        type: 'date_from_datetime_inexact',
        loc: ['query', 'as_of'],
        msg: 'Datetimes provided to dates should have zero time - e.g. be exact dates',
        input: '2024-01-01T09:30',
      },
    ]);
  });

  it('absent as_of is null', () => {
    expect(validateAsOf(undefined)).toEqual({ ok: true, value: null });
  });
});

describe('validateYear (C13)', () => {
  it('accepts 1900..2100 and absent', () => {
    expect(validateYear('1900')).toEqual({ ok: true, value: 1900 });
    expect(validateYear('2100')).toEqual({ ok: true, value: 2100 });
    expect(validateYear('2020.0')).toEqual({ ok: true, value: 2020 });
    expect(validateYear(undefined)).toEqual({ ok: true, value: null });
  });

  it('out of range and not an integer', () => {
    expect(issuesOf(validateYear('1899'))).toEqual([
      {
        type: 'greater_than_equal',
        loc: ['query', 'year'],
        msg: 'Input should be greater than or equal to 1900',
        input: '1899',
        ctx: { ge: 1900 },
      },
    ]);
    expect(issuesOf(validateYear('2101'))).toEqual([
      {
        type: 'less_than_equal',
        loc: ['query', 'year'],
        msg: 'Input should be less than or equal to 2100',
        input: '2101',
        ctx: { le: 2100 },
      },
    ]);
    expect(issuesOf(validateYear('2020.5'))).toEqual([
      {
        type: 'int_parsing',
        loc: ['query', 'year'],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        input: '2020.5',
      },
    ]);
  });
});

describe('single-fund parameters', () => {
  it('market defaults to US and is otherwise passed through (C34)', () => {
    expect(validateFundParams('VTI', {})).toEqual({ ok: true, value: { code: 'VTI', market: 'US' } });
    expect(validateFundParams('VTI', { market: 'XX' })).toEqual({
      ok: true,
      value: { code: 'VTI', market: 'XX' },
    });
    expect(validateTrailingParams('VTI', { as_of: '2024-03-28' })).toEqual({
      ok: true,
      value: { code: 'VTI', market: 'US', as_of: '2024-03-28' },
    });
    expect(validateCalendarParams('VTI', { year: '2023' })).toEqual({
      ok: true,
      value: { code: 'VTI', market: 'US', year: 2023 },
    });
  });

  it('reports path then query failures together', () => {
    const t = issuesOf(validateTrailingParams('', { as_of: 'x' })) as { type: string; loc: unknown }[];
    expect(t.map((i) => [i.type, i.loc])).toEqual([
      ['string_too_short', ['path', 'code']],
      ['date_from_datetime_parsing', ['query', 'as_of']],
    ]);
    const c = issuesOf(validateCalendarParams('x'.repeat(40), { year: 'nope' })) as {
      type: string;
      loc: unknown;
    }[];
    expect(c.map((i) => [i.type, i.loc])).toEqual([
      ['string_too_long', ['path', 'code']],
      ['int_parsing', ['query', 'year']],
    ]);
    expect(issuesOf(validateFundParams('a\tb', {}))).toHaveLength(1);
  });
});

describe('batch bodies: parsing (C21)', () => {
  it('parses bytes and strings; unknown fields ignored; defaults applied', () => {
    const body = new TextEncoder().encode(json({ codes: ['VTI', 'VTI', 'QQQ'], extra: 1 }));
    expect(validateTrailingBatchBody(body, 'application/json')).toEqual({
      ok: true,
      value: { codes: ['VTI', 'VTI', 'QQQ'], market: 'US', as_of: null },
    });
    expect(validateCalendarBatchBody(json({ codes: ['VTI'], year: 2023, market: 'US' }), undefined)).toEqual({
      ok: true,
      value: { codes: ['VTI'], market: 'US', year: 2023 },
    });
    expect(
      validateTrailingBatchBody(
        json({ codes: ['VTI'], as_of: '2024-03-28' }),
        'application/json; charset=utf-8',
      ),
    ).toEqual({
      ok: true,
      value: { codes: ['VTI'], market: 'US', as_of: '2024-03-28' },
    });
  });

  it('empty body and JSON null: missing at body', () => {
    for (const raw of ['', new Uint8Array(0), 'null']) {
      expect(issuesOf(validateTrailingBatchBody(raw, 'application/json'))).toEqual([
        { type: 'missing', loc: ['body'], msg: 'Field required', input: null },
      ]);
    }
  });

  it('bad JSON: json_invalid at the character position, Python message in ctx', () => {
    expect(issuesOf(validateTrailingBatchBody('{"codes": [1,}', 'application/json'))).toEqual([
      {
        type: 'json_invalid',
        loc: ['body', 13],
        msg: 'JSON decode error',
        input: {},
        ctx: { error: 'Expecting value' },
      },
    ]);
    expect(issuesOf(validateCalendarBatchBody("{'codes': []}", undefined))).toEqual([
      {
        type: 'json_invalid',
        loc: ['body', 1],
        msg: 'JSON decode error',
        input: {},
        ctx: { error: 'Expecting property name enclosed in double quotes' },
      },
    ]);
  });

  it('non-JSON content type or non-object JSON: model_attributes_type', () => {
    expect(issuesOf(validateTrailingBatchBody('codes=VTI', 'application/x-www-form-urlencoded'))).toEqual([
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: 'codes=VTI',
      },
    ]);
    expect(issuesOf(validateTrailingBatchBody('["VTI"]', 'application/json'))).toEqual([
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: ['VTI'],
      },
    ]);
    expect(isJsonContentType('application/vnd.api+json')).toBe(true);
    expect(isJsonContentType('text/plain')).toBe(false);
    expect(isJsonContentType(undefined)).toBe(true);
    // An HTTP request without the header (uWS gives ''): FastAPI's strict_content_type.
    expect(isJsonContentType('')).toBe(false);
    expect(issuesOf(validateTrailingBatchBody('{"codes":["VTI"]}', ''))).toEqual([
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: '{"codes":["VTI"]}',
      },
    ]);
  });
});

describe('batch bodies: fields (C14, C15, C20)', () => {
  it('codes missing: missing with the body as input', () => {
    expect(issuesOf(validateTrailingBatchBody('{}', 'application/json'))).toEqual([
      { type: 'missing', loc: ['body', 'codes'], msg: 'Field required', input: {} },
    ]);
  });

  it('codes not a list: list_type', () => {
    expect(issuesOf(validateTrailingBatchBody(json({ codes: 'VTI' }), undefined))).toEqual([
      { type: 'list_type', loc: ['body', 'codes'], msg: 'Input should be a valid list', input: 'VTI' },
    ]);
  });

  it('empty list: too_short', () => {
    expect(issuesOf(validateCalendarBatchBody(json({ codes: [] }), undefined))).toEqual([
      {
        type: 'too_short',
        loc: ['body', 'codes'],
        msg: 'List should have at least 1 item after validation, not 0',
        input: [],
        ctx: { field_type: 'List', min_length: 1, actual_length: 0 },
      },
    ]);
  });

  it('more than 100 codes: too_long only', () => {
    const codes = Array.from({ length: 101 }, (_, i) => (i === 5 ? '' : `C${i}`));
    expect(
      validateTrailingBatchBody(json({ codes: codes.slice(0, 100).map((_, i) => `C${i}`) }), undefined).ok,
    ).toBe(true);
    expect(issuesOf(validateTrailingBatchBody(json({ codes }), undefined))).toEqual([
      {
        type: 'too_long',
        loc: ['body', 'codes'],
        msg: 'List should have at most 100 items after validation, not 101',
        input: codes,
        ctx: { field_type: 'List', max_length: 100, actual_length: 101 },
      },
    ]);
  });

  it('item errors carry the index; one error per item', () => {
    const long = 'y'.repeat(33);
    const issues = issuesOf(
      validateTrailingBatchBody(json({ codes: ['OK', 7, '', `${long}\u0001`, 'A\nB'] }), undefined),
    );
    expect(issues).toEqual([
      { type: 'string_type', loc: ['body', 'codes', 1], msg: 'Input should be a valid string', input: 7 },
      {
        type: 'string_too_short',
        loc: ['body', 'codes', 2],
        msg: 'String should have at least 1 character',
        input: '',
        ctx: { min_length: 1 },
      },
      {
        type: 'string_too_long',
        loc: ['body', 'codes', 3],
        msg: 'String should have at most 32 characters',
        input: `${long}\u0001`,
        ctx: { max_length: 32 },
      },
      {
        type: 'string_pattern_mismatch',
        loc: ['body', 'codes', 4],
        msg: `String should match pattern '${PATTERN}'`,
        input: 'A\nB',
        ctx: { pattern: PATTERN },
      },
    ]);
  });

  it('as_of: date errors, lax forms, wrong type', () => {
    expect(
      issuesOf(validateTrailingBatchBody(json({ codes: ['A'], as_of: '2024-02-30' }), undefined)),
    ).toEqual([
      {
        type: 'date_from_datetime_parsing',
        loc: ['body', 'as_of'],
        msg: 'Input should be a valid date or datetime, day value is outside expected range',
        input: '2024-02-30',
        ctx: { error: 'day value is outside expected range' },
      },
    ]);
    expect(validateTrailingBatchBody(json({ codes: ['A'], as_of: null }), undefined)).toMatchObject({
      ok: true,
      value: { as_of: null },
    });
    expect(
      validateTrailingBatchBody(json({ codes: ['A'], as_of: '2024-03-28T00:00:00' }), undefined),
    ).toMatchObject({
      ok: true,
      value: { as_of: '2024-03-28' },
    });
    expect(issuesOf(validateTrailingBatchBody(json({ codes: ['A'], as_of: true }), undefined))).toEqual([
      { type: 'date_type', loc: ['body', 'as_of'], msg: 'Input should be a valid date', input: true },
    ]);
  });

  it('year: range, fractional, unparsable, wrong type, lax string', () => {
    const yearIssues = (year: unknown) =>
      issuesOf(validateCalendarBatchBody(json({ codes: ['A'], year }), undefined));
    expect(yearIssues(1899)).toEqual([
      {
        type: 'greater_than_equal',
        loc: ['body', 'year'],
        msg: 'Input should be greater than or equal to 1900',
        input: 1899,
        ctx: { ge: 1900 },
      },
    ]);
    expect(yearIssues(2101)).toEqual([
      {
        type: 'less_than_equal',
        loc: ['body', 'year'],
        msg: 'Input should be less than or equal to 2100',
        input: 2101,
        ctx: { le: 2100 },
      },
    ]);
    expect(yearIssues(2020.5)).toEqual([
      {
        type: 'int_from_float',
        loc: ['body', 'year'],
        msg: 'Input should be a valid integer, got a number with a fractional part',
        input: 2020.5,
      },
    ]);
    expect(yearIssues('soon')).toEqual([
      {
        type: 'int_parsing',
        loc: ['body', 'year'],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        input: 'soon',
      },
    ]);
    expect(yearIssues([2020])).toEqual([
      { type: 'int_type', loc: ['body', 'year'], msg: 'Input should be a valid integer', input: [2020] },
    ]);
    expect(validateCalendarBatchBody(json({ codes: ['A'], year: '2020' }), undefined)).toMatchObject({
      ok: true,
      value: { year: 2020 },
    });
  });

  it('year: a number too large for a double is finite_number with its text, not null (C20)', () => {
    for (const [text, input] of [
      ['1e400', 'Infinity'],
      ['-1e400', '-Infinity'],
    ]) {
      const issues = issuesOf(validateCalendarBatchBody(`{"codes":["A"],"year":${text}}`, undefined));
      expect(issues).toEqual([
        { type: 'finite_number', loc: ['body', 'year'], msg: 'Input should be a finite number', input },
      ]);
      const body = JSON.stringify(validationErrorBody(issues as ValidationIssue[]));
      expect(JSON.parse(body).detail[0].input).toBe(input);
    }
  });

  it('market must be a string', () => {
    expect(issuesOf(validateCalendarBatchBody(json({ codes: ['A'], market: 1 }), undefined))).toEqual([
      { type: 'string_type', loc: ['body', 'market'], msg: 'Input should be a valid string', input: 1 },
    ]);
  });

  it('lists every failure of a body in field order', () => {
    const issues = issuesOf(
      validateCalendarBatchBody(json({ year: 1800, market: false, codes: ['', 'ok', 9] }), undefined),
    ) as { type: string; loc: unknown }[];
    expect(issues.map((i) => [i.type, i.loc])).toEqual([
      ['string_too_short', ['body', 'codes', 0]],
      ['string_type', ['body', 'codes', 2]],
      ['string_type', ['body', 'market']],
      ['greater_than_equal', ['body', 'year']],
    ]);
  });
});

describe('422 inputs JSON cannot hold (C20)', () => {
  it('echoes an infinite number as its name, not null, wherever it sits', () => {
    const body = JSON.parse('{"codes":["A"],"as_of":1e400,"year":[1,-1e400]}');
    const issues = validationErrorBody([
      { type: 'date_type', loc: ['body', 'as_of'], msg: 'Input should be a valid date', input: body.as_of },
      { type: 'int_type', loc: ['body', 'year'], msg: 'Input should be a valid integer', input: body.year },
      { type: 'string_type', loc: ['body', 'codes', 0], msg: 'Input should be a valid string', input: 7 },
    ]);
    expect(JSON.parse(JSON.stringify(issues)).detail.map((i: { input: unknown }) => i.input)).toEqual([
      'Infinity',
      [1, '-Infinity'],
      7,
    ]);
  });
});

describe('numbers in a body are echoed as FastAPI echoes them (C20)', () => {
  const detail = (r: ReturnType<typeof validateCalendarBatchBody>) => {
    if (r.ok) throw new Error('expected issues');
    return validationErrorJson(r.issues);
  };

  it('a float stays a float, an int keeps every digit', () => {
    expect(detail(validateCalendarBatchBody('{"codes":["A"],"year":1899.0}', 'application/json'))).toContain(
      '"input":1899.0',
    );
    expect(detail(validateCalendarBatchBody('{"codes":[1.0, -0.0, 1e16]}', 'application/json'))).toBe(
      '{"detail":[' +
        '{"type":"string_type","loc":["body","codes",0],"msg":"Input should be a valid string","input":1.0},' +
        '{"type":"string_type","loc":["body","codes",1],"msg":"Input should be a valid string","input":-0.0},' +
        '{"type":"string_type","loc":["body","codes",2],"msg":"Input should be a valid string","input":1e+16}]}',
    );
    expect(
      detail(validateCalendarBatchBody('{"codes":["A"],"year":9007199254740993}', 'application/json')),
    ).toContain('"input":9007199254740993');
  });

  it('a year past i64: an integer is out of range, a float too big for an int', () => {
    const big = `1${'0'.repeat(399)}`;
    expect(detail(validateCalendarBatchBody(`{"codes":["A"],"year":${big}}`, 'application/json'))).toBe(
      `{"detail":[{"type":"less_than_equal","loc":["body","year"],"msg":"Input should be less than or equal to 2100","input":${big},"ctx":{"le":2100}}]}`,
    );
    expect(detail(validateCalendarBatchBody('{"codes":["A"],"year":1e20}', 'application/json'))).toBe(
      '{"detail":[{"type":"int_parsing_size","loc":["body","year"],"msg":"Unable to parse input string as an integer, exceeded maximum size","input":1e+20}]}',
    );
  });

  it('an as_of of 1e400 is echoed as the string "Infinity": the 422 stays JSON', () => {
    const r = validateTrailingBatchBody('{"codes":["A"],"as_of":1e400}', 'application/json');
    if (r.ok) throw new Error('expected issues');
    expect(JSON.parse(validationErrorJson(r.issues)).detail[0]).toMatchObject({
      type: 'date_type',
      input: 'Infinity',
    });
  });

  it('a whole body that is not an object, and a missing field, echo Python numbers too', () => {
    expect(detail(validateCalendarBatchBody('[2.0]', 'application/json'))).toContain('"input":[2.0]');
    expect(detail(validateCalendarBatchBody('{"year":2000.0}', 'application/json'))).toContain(
      '"input":{"year":2000.0}',
    );
  });
});
