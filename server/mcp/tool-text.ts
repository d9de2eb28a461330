/**
 * The text a model reads of each tool's answer: compact, with units, the same figures
 * as structuredContent (the REST answer's JSON).
 */
import type {
  CalendarReturn,
  FigureRow,
  Fund,
  FundList,
  Growth,
  RiskFigures,
  ScreenPage,
  TrailingReturns,
} from '../../schemas/index.js';

const RISK_HEADER =
  'Risk per window (volatility, drawdown, best/worst month and positive months in percent; Sharpe, Sortino, beta ' +
  'and correlation as ratios; n/a = not computable):';

function renderRisk(r: RiskFigures): string[] {
  const n = (v: string | null) => v ?? 'n/a';
  const head = `${r.code} as of ${r.as_of_date}${r.benchmark === null ? '' : ` (benchmark ${r.benchmark})`}:`;
  return [
    head,
    ...Object.entries(r.windows).map(
      ([k, w]) =>
        `  ${k} ${w.start_month}..${w.end_month}: volatility ${pct(w.volatility)}, Sharpe ${n(w.sharpe)}, ` +
        `Sortino ${n(w.sortino)}, max drawdown ${pct(w.max_drawdown)}` +
        (w.trough_date === null
          ? ''
          : ` (peak ${w.peak_date}, trough ${w.trough_date}, recovered ${n(w.recovery_date)})`) +
        `, best month ${pct(w.best_month)}${w.best_month_date === null ? '' : ` ${w.best_month_date}`}` +
        `, worst month ${pct(w.worst_month)}${w.worst_month_date === null ? '' : ` ${w.worst_month_date}`}` +
        `, positive months ${pct(w.positive_months)}, beta ${n(w.beta)}, correlation ${n(w.correlation)}`,
    ),
  ];
}

/** Figure rows as one tab-separated table: a header line, then a line per fund (n/a = no figure). */
function figureTable(rows: readonly FigureRow[]): string {
  if (rows.length === 0) return 'No funds match.';
  const figures = Object.keys(rows[0]).filter((k) => k !== 'code' && k !== 'name' && k !== 'type');
  const short = (n: string | null) => (n === null ? '' : n.length > 28 ? `${n.slice(0, 27)}…` : n);
  const lines = [['code', 'name', ...figures].join('\t')];
  for (const r of rows) lines.push([r.code, short(r.name), ...figures.map((f) => r[f] ?? 'n/a')].join('\t'));
  return lines.join('\n');
}

export const TRAILING_HEADER =
  'Trailing total returns in percent (under 2Y cumulative, 2Y and longer annualized; n/a = not computable):';

const TRAILING_LABELS: Array<[keyof TrailingReturns, string]> = [
  ['return_1d', '1D'],
  ['return_1w', '1W'],
  ['return_1m', '1M'],
  ['return_3m', '3M'],
  ['return_6m', '6M'],
  ['return_ytd', 'YTD'],
  ['return_1y', '1Y'],
  ['return_2y', '2Y'],
  ['return_3y', '3Y'],
  ['return_4y', '4Y'],
  ['return_5y', '5Y'],
  ['return_7y', '7Y'],
  ['return_10y', '10Y'],
  ['return_15y', '15Y'],
  ['return_20y', '20Y'],
  ['return_earliest_available', 'since inception'],
];
const EXTRA_LABELS: Array<[keyof TrailingReturns['extra_returns'], string]> = [
  ['return_mtd', 'MTD'],
  ['return_qtd', 'QTD'],
  ['return_25y', '25Y'],
  ['return_30y', '30Y'],
];

const pct = (v: string | null) => (v === null ? 'n/a' : `${v}%`);

export function renderTrailing(r: TrailingReturns): string {
  const parts: string[] = [];
  for (const [k, label] of TRAILING_LABELS) parts.push(`${label} ${pct(r[k] as string | null)}`);
  for (const [k, label] of EXTRA_LABELS) parts.push(`${label} ${pct(r.extra_returns[k])}`);
  return `${r.code} as of ${r.as_of_date}: ${parts.join(', ')}`;
}

export function renderCalendar(r: CalendarReturn): string {
  const kind = r.is_partial ? 'partial year' : 'full year';
  return `${r.code} ${r.year} total return ${pct(r.total_return)} (cumulative, ${r.start_date} to ${r.end_date}, ${kind})`;
}

export function renderFund(f: Fund): string {
  const facts = [
    f.type,
    f.exchange,
    f.currency,
    f.country && `domicile ${f.country}`,
    f.isin && `ISIN ${f.isin}`,
  ]
    .filter((x) => x)
    .join(', ');
  const status = f.is_inactive ? `inactive${f.inactive_date ? ` since ${f.inactive_date}` : ''}` : 'active';
  const range =
    f.min_return_date && f.max_return_date
      ? `return data ${f.min_return_date} to ${f.max_return_date}`
      : 'no return data';
  return `${f.code}: ${f.name ?? '(no name)'} (${facts}); ${status}; ${range}.`;
}

export function renderFundList(l: FundList): string {
  if (l.data.length === 0) return 'No funds match.';
  const lines = l.data.map(
    (f) =>
      `${f.code}\t${f.name ?? '(no name)'}\t${f.type}${f.exchange ? `, ${f.exchange}` : ''}` +
      (f.is_inactive ? ', inactive' : ''),
  );
  lines.push(
    l.next_cursor === null
      ? `${l.data.length} funds; no more pages.`
      : `${l.data.length} funds shown; more match: pass cursor "${l.next_cursor}" for the next page.`,
  );
  return lines.join('\n');
}

/** Batch misses are silent in REST (SPEC); an agent is told which codes gave no row. */
function missingLine(codes: unknown, rows: ReadonlyArray<{ code: string }>): string {
  const got = new Set(rows.map((r) => r.code));
  const missing = [...new Set(codes as string[])].filter((c) => !got.has(c));
  return missing.length === 0 ? '' : `No row (unknown code or no data): ${missing.join(', ')}`;
}

/** batchTrailingReturns: the header, a line per row, the codes without one. */
export function renderTrailingRows(rows: readonly TrailingReturns[], codes: unknown): string {
  const lines = [TRAILING_HEADER, ...rows.map(renderTrailing), missingLine(codes, rows)];
  return lines.filter((l) => l !== '').join('\n');
}

export function renderCalendarRows(rows: readonly CalendarReturn[], codes: unknown): string {
  const lines = [
    rows.length === 0 ? 'No calendar-year rows.' : '',
    ...rows.map(renderCalendar),
    missingLine(codes, rows),
  ];
  return lines.filter((l) => l !== '').join('\n');
}

export function renderRiskRows(rows: readonly RiskFigures[], codes: unknown): string {
  const lines = [
    rows.length === 0 ? 'No risk rows.' : RISK_HEADER,
    ...rows.flatMap(renderRisk),
    missingLine(codes, rows),
  ];
  return lines.filter((l) => l !== '').join('\n');
}

export function renderScreenPage(page: ScreenPage): string {
  const more =
    page.next_cursor === null
      ? `${page.data.length} funds; no more pages.`
      : `${page.data.length} funds shown; more match: pass cursor "${page.next_cursor}" with the same sort.`;
  return `${figureTable(page.data)}\n${more}`;
}

export function renderCompare(rows: readonly FigureRow[], codes: unknown): string {
  const lines = [figureTable(rows), missingLine(codes, rows)];
  return lines.filter((l) => l !== '').join('\n');
}

export function renderGrowth(g: Growth): string {
  const last = g.points[g.points.length - 1];
  return (
    `${g.code}: 10,000 invested on ${g.start_date} was worth ${last.value} on ${g.end_date} ` +
    `(${g.points.length} ${g.interval} points, dividends reinvested).`
  );
}
