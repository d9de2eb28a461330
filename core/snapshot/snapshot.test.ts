import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DateDay,
  Float64,
  makeData,
  RecordBatch,
  RecordBatchFileWriter,
  Struct,
  type Table,
  tableFromIPC,
  tableToIPC,
} from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';
import { syntheticColumns } from '../../test/synthetic-columns.js';
import { formatDay, fromYmd } from '../dates.js';
import { TRAILING_KEYS } from '../types.js';
import { type ColumnsToWrite, NULL_DAY, type SeriesColumns, type SnapshotColumns } from './columns.js';
import { compareUtf8 } from './invariants.js';
import type { Manifest } from './manifest.js';
import { attachSnapshot, loadSnapshot } from './reader.js';
import {
  ARROW_FILES,
  type ArrowFileName,
  CALENDAR_FILE,
  FORMAT_VERSION,
  FUNDS_FILE,
  MANIFEST_FILE,
  SERIES_FILE,
  SERIES_SCHEMA,
  TRAILING_FILE,
} from './schema.js';
import { SnapshotError, type SnapshotErrorCode } from './snapshot-error.js';
import { type SnapshotMeta, writeSnapshotFiles } from './writer.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'snapshot-test-'));
  dirs.push(d);
  return d;
}

function small(): SnapshotColumns {
  return syntheticColumns({ funds: 40, observations: 4000, seed: 7 });
}

function metaFor(cols: SnapshotColumns): SnapshotMeta {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < cols.funds.length; i++) {
    max = Math.max(max, cols.series.date[cols.funds.seriesOffset[i] + cols.funds.seriesLength[i] - 1]);
  }
  return {
    id: 'test-build',
    asOf: formatDay(max),
    builtAt: '2025-07-01T02:03:04.000Z',
    report: { funds_in: cols.funds.length, skipped_rows: 0 },
    source: { kind: 'synthetic' },
  };
}

async function written(
  cols: SnapshotColumns = small(),
): Promise<{ dir: string; cols: SnapshotColumns; manifest: Manifest }> {
  const dir = tempDir();
  const manifest = await writeSnapshotFiles(dir, cols, metaFor(cols));
  return { dir, cols, manifest };
}

/** Replaces a file's bytes and makes the manifest agree, so only the later checks can catch the damage. */
function replaceFile(dir: string, name: ArrowFileName, bytes: Uint8Array): void {
  writeFileSync(join(dir, name), bytes);
  const m = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8'));
  m.files[name] = { bytes: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') };
  writeFileSync(join(dir, MANIFEST_FILE), JSON.stringify(m));
}

function editManifest(dir: string, edit: (m: Record<string, unknown>) => void): void {
  const m = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8'));
  edit(m);
  writeFileSync(join(dir, MANIFEST_FILE), JSON.stringify(m));
}

/** Loads without verifying, lets `mutate` change the files through the column views, and writes them back. */
async function corrupt(
  dir: string,
  mutate: (cols: SnapshotColumns, tables: Record<ArrowFileName, Table>) => void,
) {
  const loaded = await loadSnapshot(dir);
  const tables = {} as Record<ArrowFileName, Table>;
  for (const name of ARROW_FILES) tables[name] = tableFromIPC(new Uint8Array(loaded.buffers[name]));
  mutate(loaded.columns, tables);
  for (const name of ARROW_FILES) replaceFile(dir, name, new Uint8Array(loaded.buffers[name]));
}

async function refusal(p: Promise<unknown>): Promise<SnapshotError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(SnapshotError);
    return e as SnapshotError;
  }
  throw new Error('expected a SnapshotError, got success');
}

function sameFloats(a: Float64Array, b: Float64Array): void {
  expect(a.length).toBe(b.length);
  // Object.is treats NaN as equal to NaN, so null positions must match exactly.
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) expect([i, a[i]]).toEqual([i, b[i]]);
}

function expectSameColumns(actual: SnapshotColumns, expected: SnapshotColumns): void {
  const fa = actual.funds;
  const fe = expected.funds;
  expect(fa.length).toBe(fe.length);
  for (const k of ['code', 'name', 'country', 'exchange', 'currency', 'type', 'isin'] as const)
    expect(fa[k]).toEqual(fe[k]);
  expect(Array.from(fa.isInactive)).toEqual(Array.from(fe.isInactive));
  expect(Array.from(fa.inactiveDate)).toEqual(Array.from(fe.inactiveDate));
  expect(Array.from(fa.seriesOffset)).toEqual(Array.from(fe.seriesOffset));
  expect(Array.from(fa.seriesLength)).toEqual(Array.from(fe.seriesLength));
  sameFloats(fa.lastClose, fe.lastClose);
  expect(
    Buffer.compare(
      Buffer.from(actual.series.date.buffer, actual.series.date.byteOffset, actual.series.date.byteLength),
      Buffer.from(
        expected.series.date.buffer,
        expected.series.date.byteOffset,
        expected.series.date.byteLength,
      ),
    ),
  ).toBe(0);
  sameFloats(actual.series.value, expected.series.value);
  expect(Array.from(actual.trailing.asOf)).toEqual(Array.from(expected.trailing.asOf));
  expect(actual.trailing.values.length).toBe(TRAILING_KEYS.length);
  for (let k = 0; k < TRAILING_KEYS.length; k++)
    sameFloats(actual.trailing.values[k], expected.trailing.values[k]);
  const ca = actual.calendar;
  const ce = expected.calendar;
  expect(ca.length).toBe(ce.length);
  for (const k of ['fund', 'year', 'startDate', 'endDate', 'isPartial'] as const)
    expect(Array.from(ca[k])).toEqual(Array.from(ce[k]));
  sameFloats(ca.totalReturn, ce.totalReturn);
}

describe('writeSnapshotFiles + loadSnapshot', () => {
  it('round-trips every column, with nulls and NaN preserved', async () => {
    const { dir, cols } = await written();
    // The fixture must exercise what the test claims to.
    expect(cols.funds.name).toContain(null);
    expect(cols.funds.inactiveDate).toContain(NULL_DAY);
    expect(cols.funds.lastClose.some(Number.isNaN)).toBe(true);
    expect(cols.trailing.values[0].some(Number.isNaN)).toBe(true);
    expect(cols.calendar.totalReturn.some(Number.isNaN)).toBe(true);
    const loaded = await loadSnapshot(dir);
    expectSameColumns(loaded.columns, cols);
    expect(loaded.dir).toBe(dir);
  });

  it('writes a manifest whose sizes and hashes match the files', async () => {
    const { dir, cols, manifest } = await written();
    const onDisk = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8'));
    expect(onDisk).toEqual(manifest);
    expect(manifest.format_version).toBe(FORMAT_VERSION);
    expect(manifest.id).toBe('test-build');
    expect(manifest.as_of).toBe('2025-06-30');
    expect(manifest.built_at).toBe('2025-07-01T02:03:04.000Z');
    expect(manifest.counts).toEqual({
      funds: cols.funds.length,
      observations: cols.series.date.length,
      calendar_rows: cols.calendar.length,
    });
    expect(manifest.report).toEqual({ funds_in: 40, skipped_rows: 0 });
    expect(manifest.source).toEqual({ kind: 'synthetic' });
    expect(Object.keys(manifest.files)).toEqual([...ARROW_FILES]);
    for (const name of ARROW_FILES) {
      const bytes = readFileSync(join(dir, name));
      expect(manifest.files[name]?.bytes).toBe(bytes.byteLength);
      expect(manifest.files[name]?.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
  });

  it('returns numeric columns as views onto the SharedArrayBuffers, not copies', async () => {
    const { dir } = await written();
    const { buffers, columns } = await loadSnapshot(dir);
    for (const name of ARROW_FILES) expect(buffers[name]).toBeInstanceOf(SharedArrayBuffer);
    const f = columns.funds;
    for (const a of [f.inactiveDate, f.seriesOffset, f.seriesLength, f.lastClose])
      expect(a.buffer).toBe(buffers[FUNDS_FILE]);
    expect(columns.series.date.buffer).toBe(buffers[SERIES_FILE]);
    expect(columns.series.value.buffer).toBe(buffers[SERIES_FILE]);
    expect(columns.trailing.asOf.buffer).toBe(buffers[TRAILING_FILE]);
    for (const v of columns.trailing.values) expect(v.buffer).toBe(buffers[TRAILING_FILE]);
    const c = columns.calendar;
    for (const a of [c.fund, c.year, c.totalReturn, c.startDate, c.endDate])
      expect(a.buffer).toBe(buffers[CALENDAR_FILE]);
  });

  it('orders codes by UTF-8 bytes, not UTF-16 units, and keeps non-ASCII text', async () => {
    const cols = syntheticColumns({ funds: 4, observations: 40 });
    // UTF-16 puts the astral 😀 (surrogate D83D) before U+E000; UTF-8 bytes (F0… vs EE…) do not.
    cols.funds.code = ['A.US', 'Ä.US', '\uE000.US', '😀.US'];
    cols.funds.name[1] = 'Ünïcödé ✓';
    const { dir } = await written(cols);
    const loaded = await loadSnapshot(dir);
    expect(loaded.columns.funds.code).toEqual(cols.funds.code);
    expect(loaded.columns.funds.name[1]).toBe('Ünïcödé ✓');

    const swapped = syntheticColumns({ funds: 4, observations: 40 });
    swapped.funds.code = ['A.US', 'Ä.US', '😀.US', '\uE000.US'];
    const e = await refusal(writeSnapshotFiles(tempDir(), swapped, metaFor(swapped)));
    expect(e.code).toBe('INVARIANT_VIOLATED');
  });

  it('writes files that apache-arrow reads with the documented column names and types', async () => {
    const { dir, cols } = await written();
    const read = (name: string) => tableFromIPC(readFileSync(join(dir, name)));
    const shape = (t: Table) => t.schema.fields.map((f) => [f.name, String(f.type), f.nullable]);

    const funds = read(FUNDS_FILE);
    expect(shape(funds)).toEqual([
      ['code', 'Utf8', false],
      ['name', 'Utf8', true],
      ['country', 'Utf8', true],
      ['exchange', 'Utf8', true],
      ['currency', 'Utf8', true],
      ['type', 'Utf8', false],
      ['isin', 'Utf8', true],
      ['is_inactive', 'Bool', false],
      ['inactive_date', 'Date32<DAY>', true],
      ['min_return_date', 'Date32<DAY>', false],
      ['max_return_date', 'Date32<DAY>', false],
      ['series_offset', 'Int32', false],
      ['series_length', 'Int32', false],
      ['last_close', 'Float64', true],
    ]);
    expect(funds.numRows).toBe(cols.funds.length);
    expect(funds.batches.length).toBe(1);
    const nullName = cols.funds.name.indexOf(null);
    expect(funds.get(nullName)?.toJSON().name).toBeNull();
    const nanClose = cols.funds.lastClose.findIndex(Number.isNaN);
    expect(funds.getChild('last_close')?.get(nanClose)).toBeNull();
    expect(funds.getChild('last_close')?.nullCount).toBe(cols.funds.lastClose.filter(Number.isNaN).length);
    const inactive = cols.funds.inactiveDate.findIndex((d) => d !== NULL_DAY);
    expect(funds.getChild('inactive_date')?.get(inactive)).toBe(
      cols.funds.inactiveDate[inactive] * 86_400_000,
    );
    expect(funds.getChild('inactive_date')?.get(0)).toBeNull();
    expect(funds.getChild('is_inactive')?.get(3)).toBe(true);
    expect(funds.getChild('max_return_date')?.get(0)).toBe(fromYmd(2025, 6, 30) * 86_400_000);
    expect(funds.getChild('min_return_date')?.get(1)).toBe(
      cols.series.date[cols.funds.seriesOffset[1]] * 86_400_000,
    );

    const series = read(SERIES_FILE);
    expect(shape(series)).toEqual([
      ['date', 'Date32<DAY>', false],
      ['value', 'Float64', false],
    ]);
    expect(series.numRows).toBe(cols.series.date.length);
    expect(series.getChild('value')?.get(10)).toBe(cols.series.value[10]);

    const trailing = read(TRAILING_FILE);
    expect(shape(trailing)).toEqual([
      ['code', 'Utf8', false],
      ['as_of_date', 'Date32<DAY>', false],
      ...TRAILING_KEYS.map((k) => [k, 'Float64', true]),
    ]);
    expect(trailing.getChild('code')?.get(5)).toBe(cols.funds.code[5]);
    const nanRow = cols.trailing.values[2].findIndex(Number.isNaN);
    expect(trailing.getChild('return_1m')?.get(nanRow)).toBeNull();

    const calendar = read(CALENDAR_FILE);
    expect(shape(calendar)).toEqual([
      ['code', 'Utf8', false],
      ['fund_index', 'Int32', false],
      ['year', 'Int32', false],
      ['total_return', 'Float64', true],
      ['start_date', 'Date32<DAY>', false],
      ['end_date', 'Date32<DAY>', false],
      ['is_partial', 'Bool', false],
    ]);
    const last = cols.calendar.length - 1;
    expect(calendar.getChild('code')?.get(last)).toBe(cols.funds.code[cols.calendar.fund[last]]);
    expect(calendar.getChild('year')?.get(last)).toBe(2025);
    const nanCal = cols.calendar.totalReturn.findIndex(Number.isNaN);
    expect(calendar.getChild('total_return')?.get(nanCal)).toBeNull();
  });

  it('attachSnapshot rebuilds equal columns over the same buffers, also after postMessage', async () => {
    const { dir, cols } = await written();
    const loaded = await loadSnapshot(dir);
    const attached = attachSnapshot({ manifest: loaded.manifest, buffers: loaded.buffers });
    expectSameColumns(attached, cols);
    expect(attached.series.value.buffer).toBe(loaded.buffers[SERIES_FILE]);

    // What a worker receives: SharedArrayBuffers survive structured cloning as the same memory.
    const { port1, port2 } = new MessageChannel();
    const received = new Promise<{ manifest: Manifest; buffers: Record<ArrowFileName, SharedArrayBuffer> }>(
      (resolve) => port2.once('message', resolve),
    );
    port1.postMessage({ manifest: loaded.manifest, buffers: loaded.buffers });
    const shared = await received;
    port1.close();
    const inWorker = attachSnapshot(shared);
    expectSameColumns(inWorker, cols);
    const before = inWorker.series.value[0];
    loaded.columns.series.value[0] = 123.5;
    expect(inWorker.series.value[0]).toBe(123.5);
    loaded.columns.series.value[0] = before;
  });

  it('loads with verifyChecksums off and still checks sizes', async () => {
    const { dir, cols } = await written();
    expectSameColumns((await loadSnapshot(dir, { verifyChecksums: false })).columns, cols);
    truncateSync(join(dir, SERIES_FILE), 100);
    expect((await refusal(loadSnapshot(dir, { verifyChecksums: false }))).code).toBe('SIZE_MISMATCH');
  });

  it('handles a 1M-row snapshot (sanity, not timed)', async () => {
    const cols = syntheticColumns({ funds: 2000, observations: 1_000_000, seed: 3 });
    const { dir, manifest } = await written(cols);
    expect(manifest.counts.observations).toBe(1_000_000);
    expect(manifest.files[SERIES_FILE]?.bytes).toBeGreaterThan(12_000_000);
    const loaded = await loadSnapshot(dir);
    expect(loaded.columns.series.value.buffer).toBe(loaded.buffers[SERIES_FILE]);
    expectSameColumns(loaded.columns, cols);
  });
});

describe('loadSnapshot refuses a damaged snapshot', () => {
  async function expectRefused(
    dir: string,
    code: SnapshotErrorCode,
    file: string,
    message?: RegExp,
  ): Promise<void> {
    const e = await refusal(loadSnapshot(dir));
    expect(e.code).toBe(code);
    expect(e.file).toBe(file);
    expect(e.message.startsWith(`${file}: `)).toBe(true);
    if (message) expect(e.message).toMatch(message);
  }

  it('a truncated file: SIZE_MISMATCH', async () => {
    const { dir } = await written();
    truncateSync(join(dir, SERIES_FILE), 1000);
    await expectRefused(dir, 'SIZE_MISMATCH', SERIES_FILE, /1000 bytes on disk/);
  });

  it('a truncated file whose manifest entry was updated to match: ARROW_INVALID', async () => {
    const { dir } = await written();
    const bytes = readFileSync(join(dir, CALENDAR_FILE));
    replaceFile(dir, CALENDAR_FILE, bytes.subarray(0, bytes.byteLength - 40));
    await expectRefused(dir, 'ARROW_INVALID', CALENDAR_FILE);
  });

  it('a flipped byte: CHECKSUM_MISMATCH', async () => {
    const { dir } = await written();
    const bytes = readFileSync(join(dir, TRAILING_FILE));
    bytes[Math.floor(bytes.byteLength / 2)] ^= 0x01;
    writeFileSync(join(dir, TRAILING_FILE), bytes);
    await expectRefused(dir, 'CHECKSUM_MISMATCH', TRAILING_FILE, /SHA-256/);
  });

  it('damage that also breaks invariants: CHECKSUM_MISMATCH first, INVARIANT_VIOLATED without checksums', async () => {
    const { dir } = await written();
    const { columns } = await loadSnapshot(dir);
    const bytes = readFileSync(join(dir, SERIES_FILE));
    bytes.fill(0xff, columns.series.value.byteOffset + 80, columns.series.value.byteOffset + 88); // a NaN value
    writeFileSync(join(dir, SERIES_FILE), bytes);
    await expectRefused(dir, 'CHECKSUM_MISMATCH', SERIES_FILE);
    const e = await refusal(loadSnapshot(dir, { verifyChecksums: false }));
    expect([e.code, e.file]).toEqual(['INVARIANT_VIOLATED', SERIES_FILE]);
    expect(e.message).toMatch(/row 10 .*value NaN/);
  });

  it('a missing Arrow file or manifest: FILE_MISSING', async () => {
    const { dir } = await written();
    unlinkSync(join(dir, FUNDS_FILE));
    await expectRefused(dir, 'FILE_MISSING', FUNDS_FILE);
    unlinkSync(join(dir, MANIFEST_FILE));
    await expectRefused(dir, 'FILE_MISSING', MANIFEST_FILE);
    await expectRefused(join(dir, 'nope'), 'FILE_MISSING', MANIFEST_FILE);
  });

  it('a manifest that is not JSON: MANIFEST_INVALID', async () => {
    const { dir } = await written();
    writeFileSync(join(dir, MANIFEST_FILE), '{"format_version": 1,');
    await expectRefused(dir, 'MANIFEST_INVALID', MANIFEST_FILE, /not valid JSON/);
  });

  it.each<[string, (m: Record<string, unknown>) => void, RegExp]>([
    ['an array', (m) => Object.assign(m, { files: [] }), /files is not an object/],
    ['no id', (m) => delete m.id, /id/],
    ['an impossible as_of', (m) => Object.assign(m, { as_of: '2025-02-29' }), /as_of/],
    ['a bad built_at', (m) => Object.assign(m, { built_at: 'yesterday' }), /built_at/],
    [
      'a negative count',
      (m) => Object.assign(m, { counts: { funds: -1, observations: 0, calendar_rows: 0 } }),
      /counts\.funds/,
    ],
    ['a file left out', (m) => delete (m.files as Record<string, unknown>)[SERIES_FILE], /series\.arrow/],
    [
      'an unknown file',
      (m) => Object.assign(m.files as object, { 'x.arrow': { bytes: 1, sha256: 'a'.repeat(64) } }),
      /x\.arrow/,
    ],
    [
      'a short hash',
      (m) => Object.assign((m.files as Record<string, object>)[FUNDS_FILE], { sha256: 'abc' }),
      /sha256/,
    ],
    ['no report', (m) => delete m.report, /report/],
  ])('a manifest with %s: MANIFEST_INVALID', async (_what, edit, message) => {
    const { dir } = await written();
    editManifest(dir, edit);
    await expectRefused(dir, 'MANIFEST_INVALID', MANIFEST_FILE, message);
  });

  it('a different format_version: VERSION_UNSUPPORTED', async () => {
    const { dir } = await written();
    editManifest(dir, (m) => {
      m.format_version = FORMAT_VERSION + 1;
    });
    await expectRefused(
      dir,
      'VERSION_UNSUPPORTED',
      MANIFEST_FILE,
      new RegExp(`format_version ${FORMAT_VERSION + 1}`),
    );
  });

  it('an Arrow stream instead of an Arrow file: ARROW_INVALID', async () => {
    const { dir } = await written();
    const stream = tableToIPC(tableFromIPC(readFileSync(join(dir, SERIES_FILE))), 'stream');
    replaceFile(dir, SERIES_FILE, stream);
    await expectRefused(dir, 'ARROW_INVALID', SERIES_FILE, /magic/);
  });

  it('a file with other columns: ARROW_INVALID', async () => {
    const { dir } = await written();
    const t = tableFromIPC(readFileSync(join(dir, FUNDS_FILE)));
    replaceFile(dir, FUNDS_FILE, tableToIPC(t.select(['code', 'name']), 'file'));
    await expectRefused(dir, 'ARROW_INVALID', FUNDS_FILE, /schema is/);
  });

  it('a file split into two record batches: ARROW_INVALID', async () => {
    const { dir } = await written();
    const t = tableFromIPC(readFileSync(join(dir, SERIES_FILE)));
    replaceFile(dir, SERIES_FILE, tableToIPC(t.slice(0, 100).concat(t.slice(100)), 'file'));
    await expectRefused(dir, 'ARROW_INVALID', SERIES_FILE, /2 record batches/);
  });

  it('trailing rows that are not one per fund: INVARIANT_VIOLATED', async () => {
    const { dir } = await written();
    const t = tableFromIPC(readFileSync(join(dir, TRAILING_FILE)));
    replaceFile(dir, TRAILING_FILE, tableToIPC(t.slice(0, t.numRows - 1), 'file'));
    await expectRefused(dir, 'INVARIANT_VIOLATED', TRAILING_FILE);
  });

  const violations: [
    string,
    string,
    RegExp,
    (c: SnapshotColumns, t: Record<ArrowFileName, Table>) => void,
  ][] = [
    [
      'duplicate codes',
      FUNDS_FILE,
      /sort strictly after/,
      (_c, t) => {
        const d = t[FUNDS_FILE].getChild('code')!.data[0];
        // Make row 1's code bytes equal row 0's (same length by construction).
        d.values.copyWithin(d.valueOffsets[1], d.valueOffsets[0], d.valueOffsets[1]);
      },
    ],
    [
      'codes out of byte order',
      FUNDS_FILE,
      /sort strictly after/,
      (_c, t) => {
        const d = t[FUNDS_FILE].getChild('code')!.data[0];
        // Row 2 becomes "F 000002.US", which sorts before row 1's "F0000001.US".
        d.values[d.valueOffsets[2] + 1] = 0x20;
      },
    ],
    [
      'a gap between offsets',
      FUNDS_FILE,
      /series_offset/,
      (c) => {
        c.funds.seriesOffset[3]++;
      },
    ],
    [
      'a zero length',
      FUNDS_FILE,
      /series_length 0/,
      (c) => {
        c.funds.seriesLength[5] += c.funds.seriesLength[4];
        c.funds.seriesLength[4] = 0;
        c.funds.seriesOffset[5] = c.funds.seriesOffset[4];
      },
    ],
    [
      'offsets not covering the series',
      SERIES_FILE,
      /cover/,
      (c) => {
        c.funds.seriesLength[c.funds.length - 1]--;
      },
    ],
    [
      'a repeated date',
      SERIES_FILE,
      /is not after/,
      (c) => {
        c.series.date[c.funds.seriesOffset[2] + 5] = c.series.date[c.funds.seriesOffset[2] + 4];
      },
    ],
    [
      'a descending date',
      SERIES_FILE,
      /is not after/,
      (c) => {
        c.series.date[c.funds.seriesOffset[2] + 5] -= 10;
      },
    ],
    [
      'a zero value',
      SERIES_FILE,
      /not finite > 0/,
      (c) => {
        c.series.value[17] = 0;
      },
    ],
    [
      'a NaN value',
      SERIES_FILE,
      /not finite > 0/,
      (c) => {
        c.series.value[17] = Number.NaN;
      },
    ],
    [
      'an infinite value',
      SERIES_FILE,
      /not finite > 0/,
      (c) => {
        c.series.value[17] = Number.POSITIVE_INFINITY;
      },
    ],
    [
      'a min_return_date off the series',
      FUNDS_FILE,
      /min\/max_return_date/,
      (_c, t) => {
        t[FUNDS_FILE].getChild('min_return_date')!.data[0].values[6] -= 1;
      },
    ],
    [
      'a max_return_date off the series',
      FUNDS_FILE,
      /min\/max_return_date/,
      (_c, t) => {
        t[FUNDS_FILE].getChild('max_return_date')!.data[0].values[6] += 1;
      },
    ],
    [
      'a null trailing figure whose slot is not NaN',
      TRAILING_FILE,
      /is null but its slot is not NaN/,
      (c) => {
        c.trailing.values[0][c.trailing.values[0].findIndex(Number.isNaN)] = 1.5;
      },
    ],
    [
      'a valid trailing figure holding NaN',
      TRAILING_FILE,
      /holds NaN but is not null/,
      (c) => {
        c.trailing.values[0][c.trailing.values[0].findIndex((v) => !Number.isNaN(v))] = Number.NaN;
      },
    ],
    [
      'calendar years out of order',
      CALENDAR_FILE,
      /sorted by \(fund, year\)/,
      (c) => {
        const { fund, year } = c.calendar;
        const i = fund.findIndex((f, j) => f === fund[j + 1]);
        [year[i], year[i + 1]] = [year[i + 1], year[i]];
      },
    ],
    [
      'a calendar fund index out of range',
      CALENDAR_FILE,
      /outside/,
      (c) => {
        c.calendar.fund[c.calendar.length - 1] = c.funds.length;
      },
    ],
    [
      'calendar funds out of order',
      CALENDAR_FILE,
      /sorted by \(fund, year\)/,
      (c) => {
        c.calendar.fund[0] = 1;
      },
    ],
    [
      'a calendar code that disagrees with its fund index',
      CALENDAR_FILE,
      /code differs/,
      (_c, t) => {
        t[CALENDAR_FILE].getChild('code')!.data[0].values[0]++;
      },
    ],
    [
      'a trailing code that disagrees with funds',
      TRAILING_FILE,
      /code differs/,
      (_c, t) => {
        t[TRAILING_FILE].getChild('code')!.data[0].values[3]++;
      },
    ],
    [
      'an inactive_date slot out of step with its null bit',
      FUNDS_FILE,
      /inactive_date/,
      (c) => {
        c.funds.inactiveDate[0] = 0;
      },
    ],
  ];
  it.each(violations)('%s (%s): INVARIANT_VIOLATED', async (_what, file, message, mutate) => {
    const { dir } = await written();
    await corrupt(dir, mutate);
    await expectRefused(dir, 'INVARIANT_VIOLATED', file, message);
  });

  it.each<[string, (m: Record<string, unknown>) => void]>([
    [
      'counts that disagree with the files',
      (m) => {
        (m.counts as Record<string, number>).observations += 1;
      },
    ],
    [
      'an as_of that is not the latest observation',
      (m) => {
        m.as_of = '2025-07-01';
      },
    ],
  ])('a manifest with %s: INVARIANT_VIOLATED', async (_what, edit) => {
    const { dir } = await written();
    editManifest(dir, edit);
    await expectRefused(dir, 'INVARIANT_VIOLATED', MANIFEST_FILE);
  });
});

describe('writeSnapshotFiles refuses bad input before writing', () => {
  const cases: [string, SnapshotErrorCode, RegExp, (c: SnapshotColumns, m: SnapshotMeta) => void][] = [
    [
      'unsorted codes',
      'INVARIANT_VIOLATED',
      /sort strictly after/,
      (c) => {
        c.funds.code.reverse();
      },
    ],
    [
      'duplicate codes',
      'INVARIANT_VIOLATED',
      /sort strictly after/,
      (c) => {
        c.funds.code[1] = c.funds.code[0];
      },
    ],
    [
      'an empty code',
      'INVARIANT_VIOLATED',
      /code is empty/,
      (c) => {
        c.funds.code[0] = '';
      },
    ],
    [
      'a bad type',
      'INVARIANT_VIOLATED',
      /type/,
      (c) => {
        (c.funds.type as string[])[0] = 'STOCK';
      },
    ],
    [
      'a column of the wrong length',
      'INVARIANT_VIOLATED',
      /name has 39 rows/,
      (c) => {
        c.funds.name.pop();
      },
    ],
    [
      'overlapping offsets',
      'INVARIANT_VIOLATED',
      /series_offset/,
      (c) => {
        c.funds.seriesOffset[2]--;
      },
    ],
    [
      'a descending date',
      'INVARIANT_VIOLATED',
      /is not after/,
      (c) => {
        c.series.date[c.funds.seriesOffset[1] + 1] -= 5;
      },
    ],
    [
      'a negative value',
      'INVARIANT_VIOLATED',
      /not finite > 0/,
      (c) => {
        c.series.value[3] = -1;
      },
    ],
    [
      'a bad last close',
      'INVARIANT_VIOLATED',
      /last_close/,
      (c) => {
        c.funds.lastClose[0] = 0;
      },
    ],
    [
      'a missing trailing column',
      'INVARIANT_VIOLATED',
      /figure columns/,
      (c) => {
        c.trailing.values.pop();
      },
    ],
    [
      'an infinite trailing figure',
      'INVARIANT_VIOLATED',
      /neither null/,
      (c) => {
        c.trailing.values[4][1] = Number.POSITIVE_INFINITY;
      },
    ],
    [
      'unsorted calendar rows',
      'INVARIANT_VIOLATED',
      /sorted by/,
      (c) => {
        c.calendar.year.reverse();
      },
    ],
    [
      'a calendar start after its end',
      'INVARIANT_VIOLATED',
      /start_date is after/,
      (c) => {
        c.calendar.startDate[0] = c.calendar.endDate[0] + 1;
      },
    ],
    [
      'an as_of that is not the latest observation',
      'MANIFEST_INVALID',
      /asOf/,
      (_c, m) => {
        m.asOf = '2025-06-29';
      },
    ],
    [
      'a report that is not an object',
      'MANIFEST_INVALID',
      /report/,
      (_c, m) => {
        m.report = [1, 2];
      },
    ],
    [
      'a bad builtAt',
      'MANIFEST_INVALID',
      /builtAt/,
      (_c, m) => {
        m.builtAt = '2025-07-01';
      },
    ],
  ];
  it.each(cases)('%s: %s', async (_what, code, message, mutate) => {
    const cols = small();
    const meta = metaFor(cols);
    mutate(cols, meta);
    const dir = tempDir();
    const e = await refusal(writeSnapshotFiles(dir, cols, meta));
    expect(e.code).toBe(code);
    expect(e.message).toMatch(message);
    expect(() => readFileSync(join(dir, FUNDS_FILE))).toThrow();
  });
});

describe('a series written in parts', () => {
  /** The series cut at these rows (repeats make empty parts), each part in memory of its own. */
  function cutAt(
    cols: SnapshotColumns,
    cuts: number[],
    shared: (part: number) => boolean = () => false,
  ): ColumnsToWrite {
    const { date, value } = cols.series;
    const bounds = [0, ...cuts, date.length];
    const parts = bounds.slice(1).map((end, k) => {
      const from = bounds[k];
      const n = end - from;
      const d = shared(k) ? new Int32Array(new SharedArrayBuffer(n * 4)) : new Int32Array(n);
      const v = shared(k) ? new Float64Array(new SharedArrayBuffer(n * 8)) : new Float64Array(n);
      d.set(date.subarray(from, end));
      v.set(value.subarray(from, end));
      return { date: d, value: v };
    });
    return { ...cols, series: parts };
  }

  /** The series file as apache-arrow's own writer makes it of the whole columns. */
  function plainSeriesFile(cols: SnapshotColumns): Uint8Array {
    const n = cols.series.date.length;
    const batch = new RecordBatch(
      SERIES_SCHEMA,
      makeData({
        type: new Struct(SERIES_SCHEMA.fields),
        length: n,
        nullCount: 0,
        children: [
          makeData({ type: new DateDay(), length: n, nullCount: 0, data: cols.series.date }),
          makeData({ type: new Float64(), length: n, nullCount: 0, data: cols.series.value }),
        ],
      }),
    );
    return RecordBatchFileWriter.writeAll([batch]).toUint8Array(true);
  }

  const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

  it.each([
    ['one part per fund', (c: SnapshotColumns) => Array.from(c.funds.seriesOffset).slice(1)],
    ['cut inside funds, single rows and empty parts', () => [1, 2, 3, 3, 3, 50, 51, 1999, 2000, 2000, 3999]],
    ['an odd number of rows in the first part (date padding)', () => [7]],
  ])('%s: the files are byte for byte those of the whole series, and load as it', async (_what, cuts) => {
    const cols = small();
    const whole = await written(cols);
    const dir = tempDir();
    const manifest = await writeSnapshotFiles(dir, cutAt(cols, cuts(cols)), metaFor(cols));
    expect(manifest).toEqual(whole.manifest);
    const file = readFileSync(join(dir, SERIES_FILE));
    expect(sha(file)).toBe(sha(plainSeriesFile(cols)));
    expectSameColumns((await loadSnapshot(dir)).columns, cols);
  });

  it('parts in shared memory and not, long and tiny, past every batch and buffer bound: the same file', async () => {
    // 48 MB of series: a shared part longer than a write piece (16 MiB of values), then
    // 2,500 tiny parts, shared or not in turn (more than one writev takes), then 21 MB
    // of parts not in shared memory (more than the staging ring holds).
    const cols = syntheticColumns({ funds: 2000, observations: 4_000_000, seed: 3 });
    const cuts: number[] = [2_200_000];
    for (let row = 2_200_020; row < 2_250_000; row += 20) cuts.push(row);
    for (let row = 2_250_000; row < 4_000_000; row += 5_000) cuts.push(row);
    const tiny = cuts.length - 350;
    const parts = cutAt(cols, cuts, (k) => k === 0 || (k < tiny && k % 2 === 0));
    const dir = tempDir();
    const manifest = await writeSnapshotFiles(dir, parts, metaFor(cols));
    const plain = plainSeriesFile(cols);
    expect(manifest.files[SERIES_FILE]).toEqual({ bytes: plain.byteLength, sha256: sha(plain) });
    expect(sha(readFileSync(join(dir, SERIES_FILE)))).toBe(sha(plain));
    expect(manifest.counts.observations).toBe(4_000_000);
    expectSameColumns((await loadSnapshot(dir)).columns, cols);
  });

  it('a date out of order where a fund crosses from one part to the next is refused, naming fund and row', async () => {
    const cols = small();
    const f = 5;
    const cut = cols.funds.seriesOffset[f] + 10;
    cols.series.date[cut] = cols.series.date[cut - 1];
    const e = await refusal(writeSnapshotFiles(tempDir(), cutAt(cols, [cut]), metaFor(cols)));
    expect(e.code).toBe('INVARIANT_VIOLATED');
    expect(e.message).toContain(`fund ${f} (${cols.funds.code[f]}) row ${cut}`);
  });

  it('a bad value in a later part is refused with its row in the whole series', async () => {
    const cols = small();
    cols.series.value[3000] = Number.NaN;
    const e = await refusal(writeSnapshotFiles(tempDir(), cutAt(cols, [100, 2000]), metaFor(cols)));
    expect(e.code).toBe('INVARIANT_VIOLATED');
    expect(e.message).toMatch(/row 3000 .*value NaN/);
  });

  it('parts short of the funds, or with dates and values of different lengths, are refused', async () => {
    const cols = small();
    const short = cutAt(cols, [100]);
    const parts = short.series as SeriesColumns[];
    const last = parts[1].date.length - 1;
    parts[1] = { date: parts[1].date.subarray(0, last), value: parts[1].value.subarray(0, last) };
    expect((await refusal(writeSnapshotFiles(tempDir(), short, metaFor(cols)))).message).toMatch(/past the/);
    const uneven = cutAt(cols, [100]);
    (uneven.series as SeriesColumns[])[0].value = new Float64Array(99).fill(1);
    expect((await refusal(writeSnapshotFiles(tempDir(), uneven, metaFor(cols)))).message).toMatch(
      /100 dates but 99 values/,
    );
  });
});

describe('compareUtf8', () => {
  it('orders strings exactly as their UTF-8 bytes compare', () => {
    // Picked around the UTF-8 length boundaries and the surrogate range, where UTF-16 order differs.
    const alphabet = ['a', 'B', 'é', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uffff', '😀', '𐀀', '.', '0'];
    let seed = 1;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed >> 8;
    };
    const word = () => {
      let w = '';
      for (let n = 1 + (next() % 4); n > 0; n--) w += alphabet[next() % alphabet.length];
      return w;
    };
    const words = Array.from({ length: 150 }, word);
    const wrong: string[][] = [];
    for (const a of words) {
      for (const b of words) {
        if (Math.sign(compareUtf8(a, b)) !== Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))))
          wrong.push([a, b]);
      }
    }
    expect(wrong).toEqual([]);
  });
});
