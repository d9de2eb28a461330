import { describe, expect, it } from 'vitest';
import { fromYmd } from './dates.js';
import { percentJson } from './format.js';
import { ByteSink, trailingRowJson, writeTrailingRow } from './rows.js';
import { TOP_LEVEL_TRAILING, TRAILING_KEYS } from './types.js';

const values = Float64Array.from(TRAILING_KEYS, (_, k) =>
  k % 5 === 2 ? Number.NaN : (k - 7) * 1.234567 + k / 9,
);
const figures = { asOf: fromYmd(2024, 2, 29), values };
const code = new TextEncoder().encode('"VFIAX"');

describe('trailing rows as bytes', () => {
  it('writes every key in order with C1 figures and null for absent ones (C1, C8)', () => {
    const row = JSON.parse(trailingRowJson('VFIAX', figures));
    expect(row.code).toBe('VFIAX');
    expect(row.market).toBe('US');
    expect(row.as_of_date).toBe('2024-02-29');
    TRAILING_KEYS.forEach((k, i) => {
      const where = i < TOP_LEVEL_TRAILING ? row : row.extra_returns;
      expect(JSON.stringify(where[k])).toBe(percentJson(values[i]));
    });
  });

  it('a row appended after other bytes, into a sink that has to grow, is the same row and leaves those bytes alone', () => {
    const sink = new ByteSink(1);
    sink.byte(0x5b);
    writeTrailingRow(sink, code, figures);
    const first = sink.at;
    sink.byte(0x2c);
    writeTrailingRow(sink, code, figures);
    sink.byte(0x5d);
    const text = new TextDecoder().decode(sink.view());
    const one = trailingRowJson('VFIAX', figures);
    expect(text).toBe(`[${one},${one}]`);
    expect(first).toBe(1 + one.length);
  });
});
