/**
 * A growth of 10,000 drawn (C55): a line chart as SVG, self-contained (no script, no
 * font or stylesheet fetched), for the API reference, which shows the one of the
 * snapshot's example fund under GET /v1/funds/{code}/growth.
 */

import { escapeHtml } from '../../core/escape.js';
import type { Growth } from '../../schemas/screen.js';

const W = 640;
const H = 280;
const PAD = { left: 64, right: 16, top: 28, bottom: 32 };
const EVERY = { day: 'daily', week: 'weekly', month: 'monthly' } as const;

export function growthSvg(g: Growth): string {
  const values = g.points.map((p) => Number(p.value));
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const span = hi > lo ? hi - lo : 1;
  const x = (k: number) => PAD.left + ((W - PAD.left - PAD.right) * k) / Math.max(1, values.length - 1);
  const y = (v: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - (v - lo) / span);
  const line = values.map((v, k) => `${x(k).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const base = y(10000);
  const label = (tx: number, ty: number, text: string, anchor = 'start') =>
    `<text x="${tx}" y="${ty}" text-anchor="${anchor}">${escapeHtml(text)}</text>`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="Growth of 10,000 in ${escapeHtml(g.code)}">`,
    '<style>text{font:12px sans-serif;fill:#333}</style>',
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    label(
      PAD.left,
      18,
      `Growth of 10,000 in ${g.code}, ${EVERY[g.interval]}, ${g.start_date} to ${g.end_date}`,
    ),
    lo <= 10000 && hi >= 10000
      ? `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${base.toFixed(1)}" y2="${base.toFixed(1)}" stroke="#bbb" stroke-dasharray="4 3"/>`
      : '',
    `<polyline fill="none" stroke="#1f6feb" stroke-width="1.5" points="${line}"/>`,
    label(PAD.left - 6, y(hi) + 4, hi.toFixed(0), 'end'),
    label(PAD.left - 6, y(lo) + 4, lo.toFixed(0), 'end'),
    label(PAD.left, H - 10, g.start_date),
    label(W - PAD.right, H - 10, g.end_date, 'end'),
    '</svg>',
    '',
  ].join('\n');
}
