/**
 * `generator.json` in a generated source directory: the parameters that planned the
 * universe, so `refresh --provider synthetic` can deliver its next days from the same
 * generator and seed. The builder reads no such file; it only records.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Day, formatDay, parseDay } from '../../core/dates.js';
import { writeAtomicSync } from '../../core/files/atomic.js';

const GENERATOR_FILE = 'generator.json';

export interface GeneratorRecord {
  seed: number;
  funds: number;
  from: Day;
  /** The last day the universe is planned to: a synthetic refresh cannot go past it. */
  horizon: Day;
}

/** Writes the record; returns its size in bytes. */
export function writeGeneratorRecord(dir: string, r: GeneratorRecord): number {
  const fields = { seed: r.seed, funds: r.funds, from: formatDay(r.from), horizon: formatDay(r.horizon) };
  const text = `${JSON.stringify(fields, null, 2)}\n`;
  writeAtomicSync(join(dir, GENERATOR_FILE), text);
  return Buffer.byteLength(text);
}

/** The record of a generated source directory; an Error naming the file when absent or unreadable. */
export function readGeneratorRecord(dir: string): GeneratorRecord {
  const path = join(dir, GENERATOR_FILE);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(
      `${path} cannot be read (${(e as Error).message}): the synthetic provider extends a universe made by \`fundreturns generate\``,
    );
  }
  const o = raw as Record<string, unknown>;
  const from = typeof o.from === 'string' ? parseDay(o.from) : null;
  const horizon = typeof o.horizon === 'string' ? parseDay(o.horizon) : null;
  if (!Number.isInteger(o.seed) || !Number.isInteger(o.funds) || from === null || horizon === null)
    throw new Error(`${path} is not a generator record (seed, funds, from, horizon)`);
  return { seed: o.seed as number, funds: o.funds as number, from, horizon };
}
