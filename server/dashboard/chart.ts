/**
 * The usage chart, drawn here as SVG (no script, no charting library to serve):
 * requests per day, admitted ones stacked by key above the axis, refused ones (429)
 * below it in one colour, so refusals are apart and cannot be mistaken for use.
 */
import type { DailyCount } from '../../accounts/model.js';
import { type Html, html } from './html.js';

interface ChartSeries {
  readonly label: string;
  /** Admitted requests per day, aligned with `days`. */
  readonly ok: readonly number[];
}

export interface ChartInput {
  readonly days: readonly string[];
  readonly series: readonly ChartSeries[];
  /** Refused (429) requests per day, all keys together. */
  readonly refused: readonly number[];
}

/** Colours with at least 3:1 contrast on white, told apart without hue too (legend order). */
const PALETTE = ['#0969da', '#1a7f37', '#8250df', '#9a6700', '#bf3989', '#0a3069', '#116329', '#6639ba'];
const REFUSED = '#cf222e';

const W = 900;
const TOP = 170;
const BOTTOM = 60;
const LEFT = 50;

export function usageChart(c: ChartInput): Html {
  const n = c.days.length;
  const totals = c.days.map((_, i) => c.series.reduce((s, x) => s + x.ok[i], 0));
  const maxOk = Math.max(1, ...totals);
  const maxRefused = Math.max(1, ...c.refused);
  const barW = (W - LEFT) / Math.max(1, n);
  const bars: Html[] = [];
  for (let i = 0; i < n; i++) {
    const x = LEFT + i * barW;
    let y = TOP;
    c.series.forEach((s, k) => {
      const v = s.ok[i];
      if (v <= 0) return;
      const h = (v / maxOk) * (TOP - 10);
      y -= h;
      bars.push(
        html`<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(1, barW - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${PALETTE[k % PALETTE.length]}"><title>${c.days[i]}: ${v} by ${s.label}</title></rect>`,
      );
    });
    const r = c.refused[i];
    if (r > 0) {
      const h = (r / maxRefused) * (BOTTOM - 10);
      bars.push(
        html`<rect x="${x.toFixed(1)}" y="${TOP + 1}" width="${Math.max(1, barW - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${REFUSED}"><title>${c.days[i]}: ${r} refused (429)</title></rect>`,
      );
    }
  }
  const first = c.days[0] ?? '';
  const last = c.days[n - 1] ?? '';
  const total = totals.reduce((a, b) => a + b, 0);
  const refusedTotal = c.refused.reduce((a, b) => a + b, 0);
  const legend = [
    ...c.series.map((s, k) => html`<li>${swatch(PALETTE[k % PALETTE.length])} ${s.label}</li>`),
    html`<li>${swatch(REFUSED)} Refused (429), below the line</li>`,
  ];
  return html`<figure class="chart">
<svg viewBox="0 0 ${W} ${TOP + BOTTOM}" role="img" aria-labelledby="chart-title" xmlns="http://www.w3.org/2000/svg">
<title id="chart-title">Requests per day from ${first} to ${last}: ${total} admitted, ${refusedTotal} refused</title>
<line x1="${LEFT}" y1="${TOP}" x2="${W}" y2="${TOP}" stroke="#57606a"/>
<text x="0" y="14" font-size="12" fill="#57606a">${maxOk}</text>
<text x="0" y="${TOP + BOTTOM - 4}" font-size="12" fill="${REFUSED}">${refusedTotal > 0 ? maxRefused : 0}</text>
<text x="${LEFT}" y="${TOP + BOTTOM - 4}" font-size="12" fill="#57606a" dx="40">${first}</text>
<text x="${W}" y="${TOP + BOTTOM - 4}" font-size="12" fill="#57606a" text-anchor="end">${last}</text>
${bars}
</svg>
<figcaption><ul class="legend">${legend}</ul></figcaption>
</figure>`;
}

/** A legend's colour sample: an SVG fill, since the Content-Security-Policy allows no inline style. */
function swatch(colour: string): Html {
  return html`<svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${colour}"/></svg>`;
}

/**
 * The account's requests per day, newest first, days without any left out: the table
 * beside the chart (and the admin view's), from the store's per-key counts.
 */
export function dailyTable(
  days: readonly string[],
  counts: ReadonlyMap<string, ReadonlyMap<string, DailyCount>>,
  keyIds: readonly string[],
): Html {
  const rows = days
    .map((d) => {
      let ok = 0;
      let refused = 0;
      for (const id of keyIds) {
        const n = counts.get(d)?.get(id);
        if (n !== undefined) {
          ok += n[0];
          refused += n[1];
        }
      }
      return { d, ok, refused };
    })
    .filter((r) => r.ok + r.refused > 0)
    .reverse();
  if (rows.length === 0) return html`<p>No requests in these days.</p>`;
  return html`<table><thead><tr><th scope="col">Day</th><th scope="col">Admitted</th><th scope="col">Refused (429)</th></tr></thead>
<tbody>${rows.map((r) => html`<tr><td>${r.d}</td><td>${r.ok}</td><td>${r.refused}</td></tr>`)}</tbody></table>`;
}
