import { afterEach, describe, expect, it, vi } from 'vitest';
import { fromYmd } from '../../core/dates.js';
import { bomLength, latestAcceptedDay, parseDateField, parseDecimal, RecordReader } from './csv.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

function dec(s: string): number {
  const b = enc(s);
  return parseDecimal(b, 0, b.length);
}

/** Deterministic doubles in [0, 1) with 53 random bits (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  const u32 = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  return () => ((u32() >>> 5) * 67108864 + (u32() >>> 6)) / 9007199254740992;
}

function records(text: string, limit?: number): { line: number; fields: string[] }[] {
  const r = new RecordReader(enc(text), limit);
  const out: { line: number; fields: string[] }[] = [];
  while (r.next()) out.push({ line: r.line, fields: r.texts() });
  return out;
}

describe('parseDecimal', () => {
  it('a field over 100 characters is no number, read in constant time (200 MB of digits once exhausted the heap)', () => {
    expect(dec(`1${'0'.repeat(99)}`)).toBe(1e99);
    expect(dec('1'.repeat(101))).toBeNaN();
    expect(dec('9'.repeat(20_000_000))).toBeNaN();
  });

  it('gives exactly the double Number() gives for 100k shortest-round-trip doubles of every magnitude (C2)', () => {
    const rand = rng(1);
    const bad: string[] = [];
    for (let i = 0; i < 100_000; i++) {
      const k = (i % 46) - 20;
      const x = rand() * 10 ** k;
      const texts = [String(x), String(-x)];
      if (i % 5 === 0)
        texts.push(x.toFixed(6), x.toExponential(), x.toPrecision(17), x.toExponential(3).toUpperCase());
      for (const t of texts) {
        if (!Object.is(dec(t), Number(t))) bad.push(t);
      }
    }
    expect(bad.slice(0, 5)).toEqual([]);
  });

  it('matches Number() on prices as data vendors print them (fixed decimals, float32 noise)', () => {
    const rand = rng(2);
    const bad: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const p = rand() * 2000;
      for (const t of [p.toFixed(2), p.toFixed(4), p.toFixed(6), String(Math.fround(p))]) {
        if (dec(t) !== Number(t)) bad.push(t);
      }
    }
    expect(bad.slice(0, 5)).toEqual([]);
  });

  it('matches Number() on random digit strings around the 2^53 and 10^22 fast-path limits', () => {
    const rand = rng(3);
    const bad: string[] = [];
    for (let i = 0; i < 50_000; i++) {
      const n = 1 + Math.floor(rand() * 24);
      let t = '';
      for (let k = 0; k < n; k++) t += String(Math.floor(rand() * 10));
      const dot = Math.floor(rand() * (n + 1));
      if (rand() < 0.7) t = `${t.slice(0, dot)}.${t.slice(dot)}`;
      if (t === '.') t = '0';
      if (rand() < 0.5) t += `e${Math.floor(rand() * 80) - 40}`;
      if (!Object.is(dec(t), Number(t))) bad.push(t);
    }
    expect(bad.slice(0, 5)).toEqual([]);
  });

  it('accepts plain decimal forms: sign, leading or trailing dot, exponent, leading zeros', () => {
    for (const t of [
      '0',
      '-0',
      '+5',
      '.5',
      '5.',
      '007',
      '1e5',
      '1E-5',
      '2.5e+3',
      '-3.25E2',
      '5.e3',
      '0.000',
    ]) {
      expect(Object.is(dec(t), Number(t)), t).toBe(true);
    }
  });

  it('falls back to Number() for long mantissas and big exponents, with the same result', () => {
    for (const t of [
      '100.06999969482422',
      '12345678901234567890',
      '9007199254740993',
      '0.1000000000000000055511151231257827',
      '1e23',
      '1e-30',
      '123.456e-25',
      '1e400',
      '-1e400',
      '1e-400',
      '1e99999999999',
    ]) {
      expect(Object.is(dec(t), Number(t)), t).toBe(true);
    }
  });

  it('rejects NaN, Infinity, 12.3.4, hex, comma decimals, whitespace and the empty field (C36)', () => {
    for (const t of [
      '',
      ' ',
      '   ',
      '\t',
      'NaN',
      'nan',
      'Infinity',
      '-Infinity',
      'inf',
      '12.3.4',
      '0x10',
      '0b1',
      '0o7',
      '1,5',
      ' 1',
      '1 ',
      '1e',
      '1e+',
      'e5',
      '.',
      '-',
      '+',
      '--1',
      '+-1',
      '1..2',
      '1_000',
      '١',
      '1.5x',
      '1e5.5',
    ]) {
      expect(dec(t), JSON.stringify(t)).toBeNaN();
    }
  });

  it('parses a slice of a larger buffer without reading past its end', () => {
    const b = enc('x,12.5,99');
    expect(parseDecimal(b, 2, 6)).toBe(12.5);
    expect(parseDecimal(b, 2, 2)).toBeNaN();
  });
});

describe('parseDateField', () => {
  const day = (s: string): number | null => {
    const b = enc(s);
    return parseDateField(b, 0, b.length);
  };

  it('reads YYYY-MM-DD and the yfinance form with a 00:00:00 suffix (C36)', () => {
    expect(day('2020-02-29')).toBe(fromYmd(2020, 2, 29));
    expect(day('2003-09-29 00:00:00')).toBe(fromYmd(2003, 9, 29));
  });

  it('an impossible date 2015-02-29 is rejected, not rolled over to 2015-03-01 (C36)', () => {
    expect(day('2015-02-29')).toBeNull();
    expect(day('2015-04-31')).toBeNull();
    expect(day('2015-13-01')).toBeNull();
  });

  it('any time suffix other than 00:00:00 is a bad date (C36)', () => {
    for (const s of [
      '2020-01-02 00:00:01',
      '2020-01-02T00:00:00',
      '2020-01-02 00:00',
      '2020-01-02 ',
      ' 2020-01-02',
      '2020-1-2',
      '20200102',
      '',
    ]) {
      expect(day(s), s).toBeNull();
    }
  });
});

describe('RecordReader', () => {
  it('skips a UTF-8 BOM before the header (C35)', () => {
    expect(bomLength(enc('\uFEFFDate'))).toBe(3);
    expect(records('\uFEFFDate,Close\n2020-01-02,1\n')[0].fields).toEqual(['Date', 'Close']);
  });

  it('reads LF and CRLF endings and a last line without a newline', () => {
    expect(records('a,b\r\nc,d\r\ne,f')).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['c', 'd'] },
      { line: 3, fields: ['e', 'f'] },
    ]);
    expect(records('a,b\nc,d\n').map((r) => r.fields)).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
  });

  it('ignores blank and whitespace-only lines but keeps physical line numbers (C36)', () => {
    expect(records('\n\na\r\n\r\n  \n\t\nb\n\n')).toEqual([
      { line: 3, fields: ['a'] },
      { line: 7, fields: ['b'] },
    ]);
  });

  it('keeps empty fields, including a trailing one', () => {
    expect(records('Date,,,\n')[0].fields).toEqual(['Date', '', '', '']);
  });

  it('reads RFC 4180 quoted fields: commas inside, doubled quotes, CRLF after', () => {
    expect(records('"a,b","say ""hi""",c\r\nx,"",y\r\n')).toEqual([
      { line: 1, fields: ['a,b', 'say "hi"', 'c'] },
      { line: 2, fields: ['x', '', 'y'] },
    ]);
  });

  it('lets a quoted field span lines and numbers the following records correctly', () => {
    expect(records('h\n"one\ntwo",3\nnext,4\n')).toEqual([
      { line: 1, fields: ['h'] },
      { line: 2, fields: ['one\ntwo', '3'] },
      { line: 4, fields: ['next', '4'] },
    ]);
  });

  it('takes a stray quote inside an unquoted field literally', () => {
    expect(records('ab"c,d\n')[0].fields).toEqual(['ab"c', 'd']);
  });

  it('an unclosed quote only spoils its own line, not the rest of the file', () => {
    expect(records('"abc,d\ne,f\n')).toEqual([
      { line: 1, fields: ['"abc', 'd'] },
      { line: 2, fields: ['e', 'f'] },
    ]);
  });

  it('stops splitting after the field limit on unquoted lines', () => {
    const r = new RecordReader(enc('a,b,c,d,e\n'), 2);
    expect(r.next()).toBe(true);
    expect(r.count).toBe(2);
    expect(r.texts()).toEqual(['a', 'b']);
  });

  it('decodes non-ASCII UTF-8 in fields', () => {
    expect(records('"Société Générale, S.A.",ü\n')[0].fields).toEqual(['Société Générale, S.A.', 'ü']);
  });

  it('matches field names ignoring ASCII case', () => {
    const r = new RecordReader(enc('TiCkEr,x\n'));
    r.next();
    expect(r.fieldIs(0, 'ticker')).toBe(true);
    expect(r.fieldIs(1, 'ticker')).toBe(false);
    expect(r.fieldIs(5, 'ticker')).toBe(false);
  });
});

describe('latestAcceptedDay: the last date a row may carry (C36)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is today in UTC plus 31 days of grace, whatever the hour', () => {
    expect(latestAcceptedDay(Date.UTC(2024, 2, 10, 0, 0))).toBe(fromYmd(2024, 4, 10));
    expect(latestAcceptedDay(Date.UTC(2024, 2, 10, 23, 59, 59, 999))).toBe(fromYmd(2024, 4, 10));
    expect(latestAcceptedDay(Date.UTC(2024, 11, 31, 12))).toBe(fromYmd(2025, 1, 31));
  });

  it('reads the clock when no time is given, so tests can pin it', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(Date.UTC(2030, 5, 15, 18)));
    expect(latestAcceptedDay()).toBe(fromYmd(2030, 7, 16));
  });
});
