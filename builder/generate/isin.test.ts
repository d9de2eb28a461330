import { describe, expect, it } from 'vitest';
import { fromYmd } from '../../core/dates.js';
import { cusip, cusipCheckDigit, isinCheckDigit, isValidCusip, isValidIsin, usIsin } from './isin.js';
import { planUniverse } from './universe.js';

describe('CUSIP and ISIN check digits', () => {
  it('reproduce the check digits of real securities', () => {
    // SPDR S&P 500 ETF, Vanguard Total Stock Market ETF, Apple, iShares Core S&P 500.
    expect(cusipCheckDigit('78462F10')).toBe(3);
    expect(cusipCheckDigit('92290876')).toBe(9);
    expect(cusipCheckDigit('03783310')).toBe(0);
    expect(cusip('46428720')).toBe('464287200');
    expect(isinCheckDigit('US78462F103')).toBe(0);
    expect(isinCheckDigit('US922908769')).toBe(0);
    expect(isinCheckDigit('US037833100')).toBe(5);
    expect(usIsin('78462F10')).toBe('US78462F1030');
    expect(usIsin('92290876')).toBe('US9229087690');
    expect(usIsin('03783310')).toBe('US0378331005');
    expect(usIsin('46428720')).toBe('US4642872000');
  });

  it('validate non-US ISINs too', () => {
    expect(isValidIsin('GB0002634946')).toBe(true); // BAE Systems
    expect(isValidIsin('DE0007164600')).toBe(true); // SAP
    expect(isValidIsin('AU0000XVGZA3')).toBe(true);
  });

  it('reject a wrong check digit or malformed input', () => {
    expect(isValidIsin('US78462F1031')).toBe(false);
    expect(isValidIsin('US78462F103')).toBe(false);
    expect(isValidIsin('us78462f1030')).toBe(false);
    expect(isValidCusip('78462F103')).toBe(true);
    expect(isValidCusip('78462F104')).toBe(false);
    expect(() => cusipCheckDigit('1234567')).toThrow();
    expect(() => isinCheckDigit('US12345678?')).toThrow();
  });

  it('hold for every generated ISIN, which are unique', () => {
    const u = planUniverse(7, 3000, fromYmd(2020, 1, 1), fromYmd(2020, 12, 31));
    const isins = u.rows.map((r) => r.isin).filter((i) => i !== '');
    expect(isins.length).toBeGreaterThan(2990);
    for (const isin of isins) {
      expect(isValidIsin(isin), isin).toBe(true);
      expect(isValidCusip(isin.slice(2, 11)), isin).toBe(true);
      expect(isin.startsWith('US')).toBe(true);
    }
    expect(new Set(isins).size).toBe(isins.length);
  });
});
