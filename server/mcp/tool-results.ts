/**
 * tools/call results prepared with the snapshot, as REST's latest rows are
 * (server/snapshot/prepared.ts): for every fund, what getFund, getTrailingReturns
 * (latest, C3) and getCalendarReturns (C12) answer when called with its code alone.
 * Each is built by the general path's own function (tools.ts `toolResultOf`) from the
 * REST row prepared beside it, once on the main thread, instead of once per call: the
 * row's JSON parse, its rendering and the two JSON string escapes were most of a
 * tools/call's instructions (bench/reports/instructions.md).
 *
 * They stay in the shared buffer, not copied into each thread as REST's rows are: an
 * answer copies its result once into the JSON-RPC envelope anyway (rpc.ts), and a
 * copy per thread would cost about 90 MB each at 32,000 funds.
 */
import type { McpToolName } from '../../schemas/index.js';
import { TOOL_BINDINGS } from '../api/route-bindings.js';
import { type PreparedShared, packRows, RowKind, SharedRows } from '../snapshot/prepared.js';
import { resultText, toolResultOf } from './tools.js';

/** The tools whose REST route has a prepared latest row, with its kind. */
export const PREPARED_TOOLS: ReadonlyArray<[McpToolName, RowKind]> = Object.entries(TOOL_BINDINGS).flatMap(
  ([name, b]) => (b.kind === 'get' && b.latest !== null ? [[name as McpToolName, b.latest]] : []),
);

/** Kinds laid out in the result buffer: the row kinds, so a tool's result is at its row's kind. */
const KINDS = Math.max(...PREPARED_TOOLS.map(([, kind]) => kind)) + 1;

const text = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.length).toString('utf8');

/**
 * The prepared results for the prepared REST rows `rows` (prepareRows), laid out like
 * them by row kind; read on the threads with `SharedRows`. A fund without a row of a
 * kind (no calendar returns) has no result: the general path answers its error.
 */
export function prepareToolResults(rows: PreparedShared): PreparedShared {
  const source = new SharedRows(rows);
  const n = rows.funds;
  const parts: string[] = new Array<string>(KINDS * n).fill('');
  for (let i = 0; i < n; i++) {
    const code = JSON.parse(text(source.row(RowKind.Code, i))) as string;
    for (const [name, kind] of PREPARED_TOOLS) {
      const row = text(source.row(kind, i));
      if (row !== '') parts[kind * n + i] = resultText(toolResultOf(name, row, { code }));
    }
  }
  return packRows(parts, n);
}
