import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { TRAILING_KEYS } from '../core/types.js';
import { MCP_TOOL_INPUT_SCHEMAS, SCHEMAS } from './index.js';

const ajv = new Ajv2020({ allErrors: true, allowUnionTypes: true, strict: true });
addFormatsModule.default(ajv, ['date', 'date-time', 'uri']);
const compile = (name: keyof typeof SCHEMAS) => ajv.compile(SCHEMAS[name]);

const fund = {
  code: 'VTI',
  market: 'US',
  name: 'Vanguard Total Stock Market ETF',
  country: 'USA',
  exchange: 'NYSE ARCA',
  currency: 'USD',
  type: 'ETF',
  isin: null,
  is_inactive: false,
  inactive_date: null,
  min_return_date: '2001-06-15',
  max_return_date: '2024-03-28',
};

function trailingRow(value: string | null = '1.2345') {
  const row: Record<string, unknown> = { code: 'VTI', market: 'US', as_of_date: '2024-03-28' };
  for (const k of TRAILING_KEYS.slice(0, 16)) row[k] = value;
  row.extra_returns = Object.fromEntries(TRAILING_KEYS.slice(16).map((k) => [k, value]));
  return row;
}

describe('schemas', () => {
  it('every schema compiles in strict mode, MCP inputs too', () => {
    for (const name of Object.keys(SCHEMAS) as (keyof typeof SCHEMAS)[])
      expect(() => compile(name)).not.toThrow();
    for (const schema of Object.values(MCP_TOOL_INPUT_SCHEMAS))
      expect(() => ajv.compile(schema)).not.toThrow();
  });

  it('Fund: every key required, type enum, dates (C17)', () => {
    const v = compile('Fund');
    expect(v(fund)).toBe(true);
    expect(v({ ...fund, type: 'BOND' })).toBe(false);
    expect(v({ ...fund, type: null })).toBe(false);
    expect(v({ ...fund, inactive_date: '2024-02-30' })).toBe(false);
    const { isin: _, ...withoutIsin } = fund;
    expect(v(withoutIsin)).toBe(false);
    expect(compile('FundList')({ data: [fund], next_cursor: null })).toBe(true);
  });

  it('TrailingReturns: C1 strings or null, all keys, exactly the C8 extras', () => {
    const v = compile('TrailingReturns');
    expect(v(trailingRow())).toBe(true);
    expect(v(trailingRow(null))).toBe(true);
    expect(v(trailingRow('-0.5000'))).toBe(true);
    for (const bad of ['1.23', '+1.2345', '1.2345%', '.', '1e2', '12.34567'])
      expect(v(trailingRow(bad))).toBe(false);
    const missingKey = trailingRow();
    delete missingKey.return_5y;
    expect(v(missingKey)).toBe(false);
    const extra = trailingRow();
    (extra.extra_returns as Record<string, unknown>).return_40y = null;
    expect(v(extra)).toBe(false);
    expect(compile('TrailingReturnsList')([trailingRow()])).toBe(true);
  });

  it('CalendarReturn (C9)', () => {
    const v = compile('CalendarReturn');
    const row = {
      code: 'VTI',
      market: 'US',
      year: 2023,
      total_return: '26.0125',
      start_date: '2022-12-30',
      end_date: '2023-12-29',
      is_partial: false,
    };
    expect(v(row)).toBe(true);
    expect(v({ ...row, total_return: null })).toBe(true);
    expect(v({ ...row, year: '2023' })).toBe(false);
  });

  it('batch requests (C14, C15)', () => {
    const t = compile('TrailingBatchRequest');
    expect(t({ codes: ['VTI'], as_of: null, anything: 1 })).toBe(true);
    expect(t({ codes: [] })).toBe(false);
    expect(t({ codes: Array(101).fill('A') })).toBe(false);
    expect(t({ codes: ['A\u0007'] })).toBe(false);
    const c = compile('CalendarBatchRequest');
    expect(c({ codes: ['VTI'], year: 2100 })).toBe(true);
    expect(c({ codes: ['VTI'], year: 1899 })).toBe(false);
  });

  it('error bodies, health, catalog', () => {
    expect(
      compile('HTTPValidationError')({
        detail: [{ type: 'missing', loc: ['body', 'codes', 0], msg: 'Field required' }],
      }),
    ).toBe(true);
    expect(compile('AppError')({ detail: 'No data loaded' })).toBe(true);
    expect(
      compile('Problem')({
        type: 'https://x.example/problems/forbidden',
        title: 'Forbidden',
        status: 403,
        detail: 'No active subscription',
        instance: '/v1/funds',
      }),
    ).toBe(true);
    const h = compile('Health');
    expect(
      h({
        status: 'ok',
        data_as_of: '2024-03-28',
        data_age_hours: 12.5,
        freshness_max_age_hours: 120,
        snapshot: { id: '2024-03-28-abc', funds: 32000, loaded_at: '2024-03-29T01:00:00Z' },
        version: '1.0.0',
      }),
    ).toBe(true);
    expect(
      h({
        status: 'empty',
        data_as_of: null,
        data_age_hours: null,
        freshness_max_age_hours: 120,
        snapshot: null,
        version: '1',
      }),
    ).toBe(true);
    const base = 'https://api.example.com';
    expect(
      compile('ApiCatalog')({
        linkset: [
          {
            anchor: `${base}/v1`,
            'service-desc': [{ href: `${base}/openapi.json`, type: 'application/vnd.oai.openapi+json' }],
            'service-doc': [{ href: `${base}/docs`, type: 'text/html' }],
            status: [{ href: `${base}/healthz`, type: 'application/json' }],
          },
        ],
      }),
    ).toBe(true);
  });
});
