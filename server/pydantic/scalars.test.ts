import { describe, expect, it } from 'vitest';
import { codePointLength, parsePydanticInt } from './scalars.js';

describe('Pydantic lax int and Python len()', () => {
  it('parsePydanticInt: whitespace, a sign, .000 and single underscores; nothing else', () => {
    expect(parsePydanticInt('-3')).toBe(-3);
    expect(parsePydanticInt(' 5 ')).toBe(5);
    expect(parsePydanticInt('5.000')).toBe(5);
    expect(parsePydanticInt('1_000')).toBe(1000);
    expect(parsePydanticInt('1__0')).toBeUndefined();
    expect(parsePydanticInt('_1')).toBeUndefined();
    expect(parsePydanticInt('5.5')).toBeUndefined();
    expect(parsePydanticInt('.0')).toBeUndefined();
  });

  it('codePointLength counts a surrogate pair once, a lone surrogate as one', () => {
    expect(codePointLength('VTI')).toBe(3);
    expect(codePointLength('😀x')).toBe(2);
    expect(codePointLength('\ud83d')).toBe(1);
  });
});
