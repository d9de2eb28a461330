export type SnapshotErrorCode =
  | 'MANIFEST_INVALID'
  | 'VERSION_UNSUPPORTED'
  | 'FILE_MISSING'
  | 'SIZE_MISMATCH'
  | 'CHECKSUM_MISMATCH'
  | 'ARROW_INVALID'
  | 'INVARIANT_VIOLATED';

/**
 * Why a snapshot was refused (by the reader) or not written (by the writer). The
 * code is stable for callers and tests; the message names the file and the reason
 * so that an operator can act on a log line alone.
 */
export class SnapshotError extends Error {
  readonly code: SnapshotErrorCode;
  /** The file at fault, when there is one (e.g. 'series.arrow', 'manifest.json'). */
  readonly file: string | undefined;

  constructor(code: SnapshotErrorCode, message: string, file?: string, options?: { cause?: unknown }) {
    super(file ? `${file}: ${message}` : message, options);
    this.name = 'SnapshotError';
    this.code = code;
    this.file = file;
  }
}
