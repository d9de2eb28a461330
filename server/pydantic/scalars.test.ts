import { describe, expect, it } from 'vitest';
import { codePointLength, parsePydanticInt, pydanticStrip } from './scalars.js';

describe('Pydantic lax int and Python len()', () => {
  it('parsePydanticInt: whitespace, a sign, .000 and single underscores; nothing else', () => {
    expect(parsePydanticInt('-3')).toBe(-3);
    expect(parsePydanticInt(' 5 ')).toBe(5);
    expect(parsePydanticInt('5.000')).toBe(5);
    expect(parsePydanticInt('1_000')).toBe(1000);
    expect(parsePydanticInt('1_0.0')).toBe(10);
    for (const refused of ['1__0', '_1', '-_1', '5.5', '.0', '5.', '5.0_0', '0x10', '1e3', '５'])
      expect(parsePydanticInt(refused)).toBe('int_parsing');
  });

  it('more than 4,300 digits is int_parsing_size, leading zeros aside', () => {
    expect(parsePydanticInt('9'.repeat(4301))).toBe('int_parsing_size');
    expect(parsePydanticInt(`-${'9'.repeat(4300)}`)).toBe('int_parsing_size');
    expect(parsePydanticInt('9'.repeat(4300))).toBeGreaterThan(1e300);
    expect(parsePydanticInt(`${'0'.repeat(4300)}1`)).toBe(1);
  });

  it('strips what Rust calls white space: U+0085 yes, U+FEFF and U+001C no', () => {
    expect(pydanticStrip('\u0085 ab\u3000')).toBe('ab');
    expect(pydanticStrip('\ufeffab')).toBe('\ufeffab');
    expect(pydanticStrip('\u001cab')).toBe('\u001cab');
    expect(parsePydanticInt('5\u0085')).toBe(5);
    expect(parsePydanticInt('5\ufeff')).toBe('int_parsing');
  });

  it('codePointLength counts a surrogate pair once, a lone surrogate as one', () => {
    expect(codePointLength('VTI')).toBe(3);
    expect(codePointLength('😀x')).toBe(2);
    expect(codePointLength('\ud83d')).toBe(1);
  });
});
