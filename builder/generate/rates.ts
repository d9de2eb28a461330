/**
 * A plausible 3-month T-bill yield for the synthetic universe (C41): a mean-reverting
 * walk in percent, floored at zero as bills were in 2009–2015, written as the EODHD
 * price file the builder reads for `rates/US3M.csv`. Its own random stream, so it
 * changes no fund's prices, and drawn day by day, so that the yields up to a day are
 * the same whatever later day it is written to (the synthetic refresh relies on it).
 */

import { Rng, Stream } from './prng.js';
import { PRICES_HEADER } from './series.js';
import type { Universe } from './universe.js';

/** The yields of trading days 0 … `endIdx` of the universe as a price file. */
export function ratesFileText(universe: Universe, endIdx: number): string {
  const rng = new Rng(universe.seed, Stream.rates, 0);
  let y = 3;
  let text = PRICES_HEADER;
  for (let k = 0; k <= endIdx; k++) {
    // Pulled towards 3 %, with a daily step of a few basis points.
    y = Math.max(0, y + 0.0015 * (3 - y) + 0.03 * rng.normal());
    const v = y.toFixed(2);
    text += `${universe.dates[k]},${v},${v},${v},${v},${v},0\n`;
  }
  return text;
}
