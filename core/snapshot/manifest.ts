/**
 * manifest.json: what a snapshot claims to be. The reader trusts nothing in the
 * directory until the manifest parses, its version is supported and every Arrow
 * file matches its size and SHA-256.
 */
import { parseDay } from '../dates.js';
import { type ArrowFileName, arrowFilesOf, FORMAT_VERSION, MANIFEST_FILE, READ_VERSIONS } from './schema.js';
import { SnapshotError } from './snapshot-error.js';

export interface ManifestFileEntry {
  bytes: number;
  /** Lower-case hex. */
  sha256: string;
}

interface ManifestCounts {
  funds: number;
  observations: number;
  calendar_rows: number;
}

export interface Manifest {
  format_version: number;
  id: string;
  /** YYYY-MM-DD: the latest last-observation date over all funds. */
  as_of: string;
  /** ISO 8601 timestamp of the build. */
  built_at: string;
  counts: ManifestCounts;
  /** Every file of its format's version (schema.ts arrowFilesOf): format 1 lists no risk or rates file. */
  files: Partial<Record<ArrowFileName, ManifestFileEntry>>;
  /** The builder's report summary, opaque to the format. */
  report: Record<string, unknown>;
  source?: unknown;
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function invalid(reason: string): SnapshotError {
  return new SnapshotError('MANIFEST_INVALID', reason, MANIFEST_FILE);
}

export function isIsoTimestamp(s: unknown): s is string {
  return typeof s === 'string' && ISO_TIMESTAMP.test(s) && Number.isFinite(Date.parse(s));
}

/**
 * Checks a parsed manifest.json and returns it typed, or throws SnapshotError
 * (VERSION_UNSUPPORTED before anything else, so a newer format whose other fields
 * changed is reported as what it is).
 */
export function validateManifest(json: unknown): Manifest {
  if (!isPlainObject(json)) throw invalid('not a JSON object');
  const v = json.format_version;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalid('format_version is not an integer');
  if (!READ_VERSIONS.includes(v)) {
    throw new SnapshotError(
      'VERSION_UNSUPPORTED',
      `format_version ${v} is not supported (this reader reads ${READ_VERSIONS.join(' and ')}; it writes ${FORMAT_VERSION})`,
      MANIFEST_FILE,
    );
  }
  if (typeof json.id !== 'string' || json.id.length === 0) throw invalid('id is not a non-empty string');
  if (typeof json.as_of !== 'string' || parseDay(json.as_of) === null) {
    throw invalid(`as_of ${JSON.stringify(json.as_of)} is not a YYYY-MM-DD date`);
  }
  if (!isIsoTimestamp(json.built_at)) {
    throw invalid(`built_at ${JSON.stringify(json.built_at)} is not an ISO 8601 timestamp`);
  }
  const counts = json.counts;
  if (!isPlainObject(counts)) throw invalid('counts is not an object');
  for (const k of ['funds', 'observations', 'calendar_rows'] as const) {
    if (!isCount(counts[k])) throw invalid(`counts.${k} is not a non-negative integer`);
  }
  const files = json.files;
  if (!isPlainObject(files)) throw invalid('files is not an object');
  const expected = arrowFilesOf(v);
  for (const name of Object.keys(files)) {
    if (!(expected as readonly string[]).includes(name))
      throw invalid(`files lists ${name}, which format_version ${v} does not have`);
  }
  for (const name of expected) {
    const e = files[name];
    if (!isPlainObject(e)) throw invalid(`files["${name}"] is missing`);
    if (!isCount(e.bytes)) throw invalid(`files["${name}"].bytes is not a non-negative integer`);
    if (typeof e.sha256 !== 'string' || !SHA256_HEX.test(e.sha256)) {
      throw invalid(`files["${name}"].sha256 is not 64 lower-case hex digits`);
    }
  }
  if (!isPlainObject(json.report)) throw invalid('report is not a JSON object');
  return json as unknown as Manifest;
}

/** Parses manifest.json's text; see validateManifest. */
export function parseManifest(text: string): Manifest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new SnapshotError('MANIFEST_INVALID', `not valid JSON (${(e as Error).message})`, MANIFEST_FILE, {
      cause: e,
    });
  }
  return validateManifest(json);
}
