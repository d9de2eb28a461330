/**
 * Fund codes and ISINs for the synthetic universe: unique within it, shaped like real
 * ones (a family's tickers share an initial, its funds share CUSIP issuer numbers).
 */
import { usIsin } from './isin.js';
import { Rng, Stream } from './prng.js';

/** CUSIP characters, without I and O which issuers avoid (they read as 1 and 0). */
const CUSIP_ALNUM = '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ';
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export function uniqueCode(
  rng: Rng,
  used: Set<string>,
  kind: 'fund' | 'etf' | 'other',
  sponsor: string,
): string {
  for (;;) {
    let code = '';
    if (kind === 'fund') {
      // Tickers of a family often share its initial (VFIAX, FXAIX).
      code = sponsor !== '' && rng.chance(0.6) ? sponsor[0] : LETTERS[rng.int(0, 25)];
      for (let k = 0; k < 3; k++) code += LETTERS[rng.int(0, 25)];
      code += 'X';
    } else {
      const len = kind === 'etf' ? [2, 3, 3, 3, 4, 4][rng.int(0, 5)] : rng.int(1, 4);
      for (let k = 0; k < len; k++) code += LETTERS[rng.int(0, 25)];
    }
    if (!used.has(code)) {
      used.add(code);
      return code;
    }
  }
}

export function randomIssuer(rng: Rng): string {
  let issuer = '';
  for (let k = 0; k < 5; k++) issuer += String(rng.int(0, 9));
  return issuer + CUSIP_ALNUM[rng.int(0, CUSIP_ALNUM.length - 1)];
}

/** A sponsor's trusts: the 6-character CUSIP issuer numbers its funds share. */
export function sponsorIssuers(seed: number, sponsor: number): string[] {
  const rng = new Rng(seed, Stream.universe, 0x10000 + sponsor);
  const out: string[] = [];
  for (let t = 0; t < 6; t++) out.push(randomIssuer(rng));
  return out;
}

export function uniqueIsin(rng: Rng, used: Set<string>, issuers: readonly string[]): string {
  for (;;) {
    const issue =
      CUSIP_ALNUM[rng.int(0, CUSIP_ALNUM.length - 1)] + CUSIP_ALNUM[rng.int(0, CUSIP_ALNUM.length - 1)];
    const isin = usIsin(rng.pick(issuers) + issue);
    if (!used.has(isin)) {
      used.add(isin);
      return isin;
    }
  }
}
