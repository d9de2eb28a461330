/**
 * The public resources served by exact path, built once per worker at startup
 * (home page, catalog, claim, docs, problem pages) and again per snapshot for /openapi.json,
 * whose examples are real answers from the live data.
 */

import { buildOpenApi } from '../schemas/openapi.js';
import { getRisk } from './api/risk-answers.js';
import { compare, growth, screen } from './api/screen-answers.js';
import type { StaticResource } from './app-context.js';
import type { ServeConfig } from './config.js';
import { headerBlock } from './http/headers.js';
import { apiCatalog } from './public/catalog.js';
import { loadClaim } from './public/claim.js';
import { DOCS_PATH, docsRoutes } from './public/docs.js';
import { HOME_PATH, homePage } from './public/home.js';
import { problemPage, problemTypes } from './public/problems.js';
import { growthSvg } from './screen/growth-svg.js';
import { RowKind } from './snapshot/prepared.js';
import type { ServingSnapshot } from './snapshot/serving.js';

export function staticResources(config: ServeConfig): Map<string, StaticResource> {
  const out = new Map<string, StaticResource>();
  out.set(HOME_PATH, {
    contentType: 'text/html; charset=utf-8',
    body: Buffer.from(homePage(config.baseUrl)),
  });
  const catalog = apiCatalog(config.baseUrl);
  out.set('/.well-known/api-catalog', {
    contentType: catalog.headers['Content-Type'],
    body: Buffer.from(catalog.body),
    headers: headerBlock([['Link', catalog.headers.Link]]),
  });
  const claim = loadClaim({ name: config.claimName, file: config.claimFile ?? undefined });
  if (claim) out.set(claim.path, { contentType: 'application/json', body: Buffer.from(claim.body) });
  for (const r of docsRoutes()) out.set(r.path, { contentType: r.contentType, body: r.body });
  // `/docs/` would resolve the page's relative asset paths one level too deep: send it to
  // `/docs`, relatively, so it also holds behind a proxy that serves the API under a path.
  out.set(`${DOCS_PATH}/`, {
    status: '308 Permanent Redirect',
    contentType: 'text/html; charset=utf-8',
    body: Buffer.from('<!doctype html><title>API reference</title><a href="../docs">API reference</a>\n'),
    headers: headerBlock([['Location', '../docs']]),
  });
  for (const slug of Object.keys(problemTypes)) {
    out.set(`/problems/${slug}`, {
      contentType: 'text/html; charset=utf-8',
      body: Buffer.from(problemPage(config.baseUrl, slug as keyof typeof problemTypes)),
    });
  }
  out.set('/openapi.json', openApiResource(config, null));
  out.set(GROWTH_SVG_PATH, growthSvgResource(null));
  return out;
}

/** /openapi.json with examples taken from the snapshot (the first fund that has every kind of row). */
export function openApiResource(config: ServeConfig, snap: ServingSnapshot | null): StaticResource {
  const examples: Record<string, unknown> = {};
  if (snap && snap.funds > 0) {
    const i = exampleFund(snap);
    const parse = (b: Uint8Array) => JSON.parse(Buffer.from(b).toString('utf8'));
    const fund = parse(snap.rows.row(RowKind.Fund, i));
    const trailing = parse(snap.rows.row(RowKind.Trailing, i));
    const calendar = snap.rows.row(RowKind.Calendar, i);
    examples.getFund = fund;
    examples.getTrailingReturns = trailing;
    examples.batchTrailingReturns = [trailing];
    const risk = getRisk(snap, snap.lookup.cols.funds.code[i], {});
    if (risk.status === 200) {
      examples.getRiskFigures = JSON.parse(Buffer.from(risk.body).toString('utf8'));
      examples.batchRiskFigures = [examples.getRiskFigures];
    }
    if (calendar.byteLength > 0) {
      examples.getCalendarReturns = parse(calendar);
      examples.batchCalendarReturns = [parse(calendar)];
    }
    const text = (b: Uint8Array | string) => (typeof b === 'string' ? b : Buffer.from(b).toString('utf8'));
    const page = screen(snap, { return_1y_min: '0', sort: '-return_5y', limit: '3' });
    if (page.status === 200) examples.screenFunds = JSON.parse(text(page.body));
    const codes = snap.lookup.cols.funds.code;
    const compared = compare(snap, { codes: [codes[i], ...codes.slice(0, 2)].join(',') });
    if (compared.status === 200) examples.compareFunds = JSON.parse(text(compared.body));
    const g = growth(snap, codes[i], { interval: 'month' });
    if (g.status === 200) {
      const all = JSON.parse(text(g.body));
      // The document shows the first points; the drawing (GROWTH_SVG_PATH) all of them.
      examples.getGrowth = { ...all, points: all.points.slice(0, 3) };
    }
  }
  const doc = buildOpenApi({ baseUrl: config.baseUrl, baseUrlDerived: config.baseUrlDerived, examples });
  return { contentType: 'application/json', body: Buffer.from(JSON.stringify(doc)) };
}

/** The example fund's growth of 10,000 drawn, linked from the API reference (C55). */
export const GROWTH_SVG_PATH = '/docs/growth-example.svg';

export function growthSvgResource(snap: ServingSnapshot | null): StaticResource {
  const text = (b: Uint8Array | string) => (typeof b === 'string' ? b : Buffer.from(b).toString('utf8'));
  const g = snap && snap.funds > 0 ? growth(snap, snap.lookup.cols.funds.code[exampleFund(snap)], {}) : null;
  const body =
    g?.status === 200
      ? growthSvg(JSON.parse(text(g.body)))
      : '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="40"><text x="8" y="24">No data loaded</text></svg>\n';
  return { contentType: 'image/svg+xml', body: Buffer.from(body) };
}

/** A fund with a long history shows more non-null figures: prefer the one with most observations among the first 200. */
function exampleFund(snap: ServingSnapshot): number {
  const len = snap.lookup.cols.funds.seriesLength;
  let best = 0;
  for (let i = 1; i < Math.min(200, snap.funds); i++) if (len[i] > len[best]) best = i;
  return best;
}
