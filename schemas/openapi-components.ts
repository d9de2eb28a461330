/**
 * The OpenAPI document's fixed parts: its `info` (what the API is and how it answers)
 * and the components every operation refers to (security scheme, headers, responses).
 */
import { BATCH_MAX_CODES, MAX_BODY_TEXT, TOO_LARGE_DETAIL } from './common.js';
import { PROBLEM_SLUGS } from './error-bodies.js';
import { appError, hdr, type Json, jsonOrMsgpack, LIMIT_HEADERS, problem, ref } from './openapi-blocks.js';

export function info(): Json {
  return {
    title: 'Fund Returns API',
    version: '1.0.0',
    summary: 'Trailing and calendar-year total returns and metadata for US mutual funds and ETFs.',
    description:
      'Trailing total returns and calendar-year total returns for US mutual funds and ETFs (the number served is in `/healthz`), ' +
      'plus fund metadata, built from adjusted end-of-day prices and refreshed daily on trading days.\n\n' +
      '**Returns** are percent strings with exactly 4 decimals (`"12.3456"` = +12.3456 %) or null, never ' +
      'omitted (C1). Periods under 2 years (including YTD) are cumulative; 2 years and longer are annualized ' +
      '(CAGR, C6). `return_earliest_available` is since inception, annualized when the span is at least 2 ' +
      'years (C7).\n\n' +
      '**Errors**: 401/403/429 are `application/problem+json` (C22); 404, 413 and 503 are `{"detail": "…"}`; ' +
      '422 is FastAPI-style `{"detail": [{type, loc, msg, input, ctx}]}` listing every failure (C20). An unknown ' +
      'route is 404 `{"detail":"Not Found"}`; a known route with another method is 405 ' +
      '`{"detail":"Method Not Allowed"}` with an `Allow` header (C21). Checks run in the order route, auth, ' +
      'limits, validation, lookup (C23).\n\n' +
      '**Limits** per account and plan: a per-minute burst and a monthly quota (C26–C28); every authenticated ' +
      'response carries `RateLimit` and `RateLimit-Policy` (C29). Each call counts one request, a batch call ' +
      'and an MCP call included.\n\n' +
      '**MCP**: the same data as tools at `/mcp` (Streamable HTTP, stateless, JSON responses) with the same key ' +
      'and limits.\n\nThe data is informational only, not investment advice.',
  };
}

export function securitySchemes(): Json {
  return {
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'fr_live_…',
      description:
        '`Authorization: Bearer <API_KEY>` on every /v1 request and on /mcp (scheme name case-insensitive). Keys ' +
        'are random (at least 160 bits), prefixed `fr_live_`, shown once at creation and stored only as a ' +
        'SHA-256 hash; keep them server-side like passwords. Unknown or revoked key: 401; valid key whose account ' +
        'has no active subscription: 403 (C25).',
    },
  };
}

/** The response headers operations refer to by `$ref`. */
export function headers(): Json {
  return {
    'X-Data-As-Of': {
      description:
        'Newest as_of date of the data snapshot that answered (`YYYY-MM-DD`). Stale data is still served; ' +
        'its age shows here and in /healthz (C24).',
      schema: { type: 'string', format: 'date' },
    },
    RateLimit: {
      description:
        'IETF RateLimit fields (C29): `"burst";r=<left>;t=<seconds to full>, "quota";r=<left>;t=<seconds to reset>`.',
      schema: { type: 'string', examples: ['"burst";r=99;t=1, "quota";r=249;t=1209600'] },
    },
    'RateLimit-Policy': {
      description:
        'IETF RateLimit-Policy (C29): `"burst";q=<per minute>;w=60, "quota";q=<per month>;w=<seconds in month>`.',
      schema: { type: 'string', examples: ['"burst";q=100;w=60, "quota";q=250;w=2592000'] },
    },
    'Retry-After': {
      description:
        'Whole seconds to wait: until one request is allowed again (burst, C27) or until the first second of ' +
        'next month UTC (quota, C28).',
      schema: { type: 'integer', minimum: 0 },
    },
    'WWW-Authenticate': {
      description: 'Always `Bearer` (C22).',
      schema: { type: 'string', const: 'Bearer' },
    },
    Allow: { description: 'Methods the route accepts (C21).', schema: { type: 'string' } },
    Link: {
      description: '`</.well-known/api-catalog>; rel="api-catalog"` (C33).',
      schema: { type: 'string' },
    },
  };
}

/** The shared answers (errors, mostly) operations refer to by `$ref`; `base` is the problem types' base URL. */
export function responses(base: string): Json {
  return {
    Unauthorized: problem(
      base,
      'Missing, malformed, unknown or revoked API key (problem slug `unauthorized`).',
      'unauthorized',
      {
        'WWW-Authenticate': hdr('WWW-Authenticate'),
      },
    ),
    Forbidden: problem(
      base,
      'Valid key, but its account has no active subscription (slug `forbidden`). Nothing is counted.',
      'forbidden',
      LIMIT_HEADERS,
    ),
    TooManyRequests: problem(
      base,
      `Per-minute burst limit (slug \`rate-limited\`) or monthly quota (slug \`quota-exceeded\`) exceeded. ` +
        `Problem slugs in use: ${PROBLEM_SLUGS.join(', ')}.`,
      'rate-limited',
      { 'Retry-After': hdr('Retry-After'), ...LIMIT_HEADERS },
    ),
    NotFound: appError(
      'Unknown fund code, or no row for the requested date or year (C3, C12).',
      'No fund with code XYZ',
      LIMIT_HEADERS,
    ),
    PayloadTooLarge: appError(`Request body over ${MAX_BODY_TEXT} (C21).`, TOO_LARGE_DETAIL, LIMIT_HEADERS),
    MethodNotAllowed: appError('Known route, other method (C21).', 'Method Not Allowed', {
      Allow: hdr('Allow'),
    }),
    ValidationFailed: {
      description: `Invalid parameter or body, or more than ${BATCH_MAX_CODES} codes; every failure listed (C20).`,
      headers: LIMIT_HEADERS,
      content: jsonOrMsgpack(ref('HTTPValidationError')),
    },
    ServiceUnavailable: appError('No data snapshot loaded (C24).', 'No data loaded', {
      'Retry-After': {
        description: 'Seconds after which data may be loaded: 30.',
        schema: { type: 'integer', minimum: 0 },
      },
      ...LIMIT_HEADERS,
    }),
  };
}
