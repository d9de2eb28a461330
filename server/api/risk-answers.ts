/**
 * What the risk endpoints answer (C38–C46), independent of transport: REST's
 * GET /v1/funds/{code}/risk and POST /v1/risk/batch, and the MCP tool getRiskFigures.
 * The latest figures come from the snapshot's columns (computed at build time);
 * an as_of row, and beta and correlation, are computed per request from the series.
 */
import { unknownCodeDetail } from '../../core/codes.js';
import { type Day, parseDay } from '../../core/dates.js';
import {
  monthOf,
  RISK_SLOTS,
  RISK_WINDOWS,
  riskAnchor,
  riskBetaCorrelation,
  riskFigures,
  Slot,
  STORED_DATES,
  STORED_FIGURES,
} from '../../core/risk.js';
import { benchmarkJson, writeRiskRow } from '../../core/risk-row.js';
import { ByteSink } from '../../core/rows.js';
import { NULL_DAY } from '../../core/snapshot/columns.js';
import { RowKind } from '../snapshot/prepared.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import type { Answer, Params } from './answers.js';
import {
  unknownBenchmark,
  type ValidationIssue,
  validateRiskBatchBody,
  validateRiskParams,
  validationErrorJson,
} from './validation.js';

const NO_BENCHMARK = benchmarkJson(null);

/** This thread's risk rows, written as bytes (one request at a time per thread). */
const sink = new ByteSink();

function invalid(issues: ValidationIssue[]): Answer {
  return { status: 422, body: validationErrorJson(issues), issues };
}

function notFound(detail: string): Answer {
  return { status: 404, body: JSON.stringify({ detail }), detail };
}

/**
 * The benchmark's fund index: the one asked for (-2 when it is not in the universe:
 * a 422), else the server's default (-1: none).
 */
function benchmarkOf(snap: ServingSnapshot, asked: string | null): number {
  if (asked === null) return snap.defaultBenchmark;
  const i = snap.lookup.find(asked);
  return i < 0 ? -2 : i;
}

/** GET /v1/funds/{code}/risk (C46). */
export function getRisk(snap: ServingSnapshot, code: string | null, params: Params): Answer {
  const v = validateRiskParams(code ?? '\u0000', params);
  if (!v.ok) return invalid(v.issues);
  const b = benchmarkOf(snap, v.value.benchmark);
  const i = snap.lookup.find(v.value.code);
  // C23: validation (the benchmark is a parameter) before lookup.
  if (b === -2) return invalid([unknownBenchmark(['query', 'benchmark'], v.value.benchmark!)]);
  if (i < 0) return notFound(unknownCodeDetail(v.value.code, (c) => snap.lookup.find(c) >= 0));
  const day = v.value.as_of === null ? undefined : (parseDay(v.value.as_of) ?? Number.NEGATIVE_INFINITY);
  sink.at = 0;
  if (!appendRiskRow(snap, i, day, b))
    return notFound(`Fund ${v.value.code} has no data on or before ${v.value.as_of}`);
  return { status: 200, body: sink.view() };
}

/** POST /v1/risk/batch: rows in request order, duplicates once, misses left out (C16). */
export function riskBatch(
  snap: ServingSnapshot,
  body: Uint8Array | string,
  contentType: string | undefined,
): Answer {
  const v = validateRiskBatchBody(body, contentType);
  if (!v.ok) return invalid(v.issues);
  const b = benchmarkOf(snap, v.value.benchmark);
  if (b === -2) return invalid([unknownBenchmark(['body', 'benchmark'], v.value.benchmark!)]);
  const day = v.value.as_of === null ? undefined : (parseDay(v.value.as_of) ?? Number.NEGATIVE_INFINITY);
  sink.at = 0;
  sink.byte(0x5b);
  const stamp = snap.nextStamp();
  let rows = 0;
  for (const code of v.value.codes) {
    const i = snap.lookup.find(code);
    if (i < 0 || snap.marks[i] === stamp) continue;
    snap.marks[i] = stamp;
    const before = sink.at;
    if (rows > 0) sink.byte(0x2c);
    if (appendRiskRow(snap, i, day, b)) rows++;
    else sink.at = before;
  }
  sink.byte(0x5d);
  return { status: 200, body: sink.view() };
}

/**
 * Fund i's risk row at `day` (undefined: the latest) against benchmark fund `b`
 * (-1: none) appended to the sink; false when the fund has no observation on or
 * before `day` (C3).
 */
function appendRiskRow(snap: ServingSnapshot, i: number, day: Day | undefined, b: number): boolean {
  const s = snap.lookup.series(i);
  const anchor = riskAnchor(s, day);
  if (anchor === null) return false;
  const out = snap.riskScratch;
  const bench = b < 0 ? null : snap.benchmark(b);
  if (anchor.index === s.start + s.length - 1) {
    // The latest anchor: its figures were computed at build time.
    storedFigures(snap, i, out);
    if (bench !== null) riskBetaCorrelation(s, anchor, bench.returns, out);
  } else {
    riskFigures(s, anchor, snap.rates, bench?.returns ?? null, out);
  }
  writeRiskRow(
    sink,
    snap.rows.row(RowKind.Code, i),
    anchor.asOf,
    anchor.endMonth,
    bench?.json ?? NO_BENCHMARK,
    out,
  );
  return true;
}

/** Fund i's stored latest figures into the slots of core/risk.ts (beta and correlation null). */
function storedFigures(snap: ServingSnapshot, i: number, out: Float64Array): void {
  const risk = snap.lookup.cols.risk;
  for (let w = 0; w < RISK_WINDOWS.length; w++) {
    const o = w * RISK_SLOTS;
    for (let f = 0; f < STORED_FIGURES.length; f++)
      out[o + f] = risk.figures[w * STORED_FIGURES.length + f][i];
    for (let d = 0; d < STORED_DATES.length; d++) {
      const slot = Slot.PeakDate + d;
      const day = risk.dates[w * STORED_DATES.length + d][i];
      out[o + slot] = day === NULL_DAY ? Number.NaN : slot >= Slot.BestMonthDate ? monthOf(day) : day;
    }
    out[o + Slot.Beta] = Number.NaN;
    out[o + Slot.Correlation] = Number.NaN;
  }
}
