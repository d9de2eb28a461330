/**
 * CUSIP and ISIN check digits, so generated identifiers pass the validators that
 * real consumers (and the builder's own tests) run on them.
 */

/** Value of one CUSIP character: digits as is, A=10 … Z=35, then * @ #. */
function cusipCharValue(ch: string): number {
  const c = ch.charCodeAt(0);
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 90) return c - 55;
  if (ch === '*') return 36;
  if (ch === '@') return 37;
  if (ch === '#') return 38;
  throw new Error(`invalid CUSIP character ${JSON.stringify(ch)}`);
}

/** Check digit of an 8-character CUSIP base (issuer 6 + issue 2). */
export function cusipCheckDigit(base: string): number {
  if (base.length !== 8) throw new Error(`CUSIP base must have 8 characters: ${base}`);
  let sum = 0;
  for (let i = 0; i < 8; i++) {
    let v = cusipCharValue(base[i]);
    if (i % 2 === 1) v *= 2;
    sum += Math.floor(v / 10) + (v % 10);
  }
  return (10 - (sum % 10)) % 10;
}

/** Check digit of an 11-character ISIN base (country 2 + NSIN 9): Luhn over the letters expanded to numbers. */
export function isinCheckDigit(base: string): number {
  if (base.length !== 11) throw new Error(`ISIN base must have 11 characters: ${base}`);
  let digits = '';
  for (const ch of base) {
    const c = ch.charCodeAt(0);
    if (c >= 48 && c <= 57) digits += ch;
    else if (c >= 65 && c <= 90) digits += String(c - 55);
    else throw new Error(`invalid ISIN character ${JSON.stringify(ch)}`);
  }
  let sum = 0;
  // Luhn doubles every second digit counting from the right, starting with the
  // rightmost, because the check digit that will follow takes the undoubled place.
  for (let i = digits.length - 1, double = true; i >= 0; i--, double = !double) {
    let v = digits.charCodeAt(i) - 48;
    if (double) {
      v *= 2;
      if (v > 9) v -= 9;
    }
    sum += v;
  }
  return (10 - (sum % 10)) % 10;
}

/** A full 9-character CUSIP from its 8-character base. */
export function cusip(base: string): string {
  return base + String(cusipCheckDigit(base));
}

/** A US ISIN from an 8-character CUSIP base. */
export function usIsin(cusipBase: string): string {
  const nsin = cusip(cusipBase);
  const base = `US${nsin}`;
  return base + String(isinCheckDigit(base));
}

export function isValidIsin(isin: string): boolean {
  if (!/^[A-Z]{2}[0-9A-Z]{9}[0-9]$/.test(isin)) return false;
  return isinCheckDigit(isin.slice(0, 11)) === isin.charCodeAt(11) - 48;
}

export function isValidCusip(value: string): boolean {
  if (!/^[0-9A-Z*@#]{8}[0-9]$/.test(value)) return false;
  return cusipCheckDigit(value.slice(0, 8)) === value.charCodeAt(8) - 48;
}
