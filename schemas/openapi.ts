/**
 * The OpenAPI 3.1 document (C33: served at /openapi.json, `info.version` 1.0.0). Built
 * from the same schema objects ajv compiles, so documentation and validation cannot
 * drift apart.
 */
import { CodeSchema, MarketParamSchema } from './common.js';
import { PROBLEM_SLUGS } from './errors.js';
import { SCHEMAS, type SchemaName } from './index.js';
import {
  CalendarQuerySchema,
  FundQuerySchema,
  ListFundsQuerySchema,
  TrailingQuerySchema,
} from './requests.js';
import { type OperationId, ROUTES, type RouteDecl } from './routes.js';
import {
  COMPARE_MAX_CODES,
  CompareQuerySchema,
  GROWTH_MAX_POINTS,
  GrowthQuerySchema,
  SCREEN_LIMIT_MAX,
  ScreenQuerySchema,
} from './screen.js';

export interface OpenApiOptions {
  /** Public base URL, without a trailing slash (`servers[0].url`). */
  baseUrl: string;
  /**
   * True when no public base URL was configured and `baseUrl` is only the address the
   * server listens on: `servers` is then `/`, relative to wherever the document was
   * fetched from, so the API reference's "Try it out" calls the host the reader used
   * (`localhost`, a tunnel, a name), not a listening address it may not reach.
   */
  baseUrlDerived?: boolean;
  /** Example 200 bodies keyed by operationId; the server fills them from real data. */
  examples?: Record<string, unknown>;
}

type Json = Record<string, unknown>;

const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });

/** Object identity → component name, so nested reuse of a named schema becomes a `$ref`. */
const NAME_OF = new Map<unknown, SchemaName>(
  (Object.entries(SCHEMAS) as [SchemaName, unknown][]).map(([name, schema]) => [schema, name]),
);

/** Deep copy, replacing every nested named schema (but not the root) with its `$ref`. */
function copyWithRefs(value: unknown, root: boolean): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (!root) {
    const name = NAME_OF.get(value);
    if (name !== undefined) return ref(name);
  }
  if (Array.isArray(value)) return value.map((v) => copyWithRefs(v, false));
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) out[k] = copyWithRefs(v, false);
  return out;
}

/** A standalone schema (for parameters): a copy so the document never aliases the constants. */
const inline = (schema: unknown) => copyWithRefs(schema, false);

function queryParams(props: Record<string, { description?: string }>): Json[] {
  return Object.entries(props).map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    description: schema.description,
    schema: inline(schema),
  }));
}

const codePathParam = {
  name: 'code',
  in: 'path',
  required: true,
  description: CodeSchema.description,
  schema: inline(CodeSchema),
};

const hdr = (name: string) => ({ $ref: `#/components/headers/${name}` });
const resp = (name: string) => ({ $ref: `#/components/responses/${name}` });

const LIMIT_HEADERS = { RateLimit: hdr('RateLimit'), 'RateLimit-Policy': hdr('RateLimit-Policy') };

/** 200 of a data endpoint: JSON by default, MessagePack on `Accept: application/msgpack`. */
function dataOk(description: string, schema: SchemaName, example: unknown, picked?: SchemaName): Json {
  // With `fields` (C51) the row is the smaller one.
  const body = picked === undefined ? ref(schema) : { anyOf: [ref(schema), ref(picked)] };
  const json: Json = { schema: body };
  if (example !== undefined) json.example = example;
  return {
    description,
    headers: { 'X-Data-As-Of': hdr('X-Data-As-Of'), ...LIMIT_HEADERS },
    content: {
      'application/json': json,
      'application/msgpack': { schema: body },
    },
  };
}

function dataResponses(ok: Json, kind: 'single' | 'batch' | 'list'): Json {
  const r: Json = {
    '200': ok,
    '401': resp('Unauthorized'),
    '403': resp('Forbidden'),
  };
  if (kind === 'single') r['404'] = resp('NotFound');
  if (kind === 'batch') r['413'] = resp('PayloadTooLarge');
  r['422'] = resp('ValidationFailed');
  r['429'] = resp('TooManyRequests');
  r['503'] = resp('ServiceUnavailable');
  return r;
}

const jsonBody = (name: SchemaName, description: string) => ({
  required: true,
  description:
    `${description} Sent as \`Content-Type: application/json\` (or \`application/*+json\`); a body ` +
    'of any other type, or with none, is a 422 `model_attributes_type` (C21).',
  content: { 'application/json': { schema: ref(name) } },
});

const PUBLIC = { security: [] };

/** C21's body for a path with nothing there. */
const NOT_FOUND_DETAIL = 'Not Found';

/** /mcp's body and answer: one JSON-RPC 2.0 message, or a batch of them. */
const JSON_RPC_MESSAGES = {
  type: ['object', 'array'],
  // Said outright: generated clients read a bare `type: object` as an object with no keys.
  additionalProperties: true,
  items: { type: 'object', additionalProperties: true },
  description: 'A JSON-RPC 2.0 message (an object), or a batch of them (an array of objects).',
};

type ProblemSlug = (typeof PROBLEM_SLUGS)[number];

/**
 * Title, status and an example detail of each gateway refusal, as the server words
 * them (server/public/problems.ts, server/access/gate.ts): server/resources.test.ts
 * holds the examples to the server's own bodies.
 */
export const PROBLEM_EXAMPLES: Record<ProblemSlug, { title: string; status: number; detail: string }> = {
  unauthorized: {
    title: 'Missing or invalid API key',
    status: 401,
    detail: 'Missing Authorization header: send Authorization: Bearer <API key>.',
  },
  forbidden: {
    title: 'No active subscription',
    status: 403,
    detail: 'The account has no active subscription (status canceled).',
  },
  'rate-limited': {
    title: 'Rate limit exceeded',
    status: 429,
    detail: 'Burst limit of 100 requests per minute exceeded; retry after 1 s.',
  },
  'quota-exceeded': {
    title: 'Monthly quota exceeded',
    status: 429,
    detail:
      'Monthly quota of 250 requests used up; it resets at the start of next month (UTC) or on moving to a higher plan.',
  },
};

function problemExample(base: string, slug: ProblemSlug) {
  const { title, status, detail } = PROBLEM_EXAMPLES[slug];
  return { type: `${base}/problems/${slug}`, title, status, detail, instance: '/v1/funds/VTI' };
}

/** The MCP tools, each named where its REST route is declared. */
const MCP_TOOLS = ROUTES.flatMap((r: RouteDecl) => (r.mcpTool === undefined ? [] : [r.mcpTool])).join(', ');

/**
 * `paths` from the route table: each declared method gets its operation's
 * description, under the operationId the table gives it. Typed so that an
 * operationId without a description does not compile.
 */
function pathsOf(ops: Record<OperationId, Json>): Json {
  const paths: Json = {};
  for (const r of ROUTES as readonly RouteDecl[]) {
    const item: Json = {};
    for (const [method, id] of Object.entries({ ...r.ops, ...r.refused }))
      item[method] = { operationId: id, ...ops[id as OperationId] };
    paths[r.path] = item;
  }
  return paths;
}

export function buildOpenApi(opts: OpenApiOptions): Json {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const ex = (operationId: string) => opts.examples?.[operationId];

  const schemas: Json = {};
  for (const [name, schema] of Object.entries(SCHEMAS)) schemas[name] = copyWithRefs(schema, true);

  /**
   * A gateway refusal (C22) with its own example: without one a viewer draws every
   * status from the schema's property examples, and a 401 would show a 429 body.
   */
  const problem = (description: string, slug: ProblemSlug, extraHeaders: Json = {}) => ({
    description,
    headers: extraHeaders,
    content: {
      'application/problem+json': { schema: ref('Problem'), example: problemExample(base, slug) },
    },
  });
  // Every JSON answer of the server, errors and /healthz included, comes as MessagePack on
  // `Accept: application/msgpack` (server/http/call.ts).
  const jsonOrMsgpack = (schema: Json, example?: unknown) => ({
    'application/json': example === undefined ? { schema } : { schema, example },
    'application/msgpack': { schema },
  });
  /** A `{"detail": …}` answer (C21), with the sentence this status actually says. */
  const appError = (description: string, detail: string, headers?: Json) => ({
    description,
    ...(headers ? { headers } : {}),
    content: jsonOrMsgpack(ref('AppError'), { detail }),
  });
  const headOf = (summary: string, headers?: Json): Json => ({
    tags: ['meta'],
    summary,
    description: 'As GET, without the body (the headers and `Content-Length` GET would send).',
    ...PUBLIC,
    responses: { '200': { description: 'Headers only.', ...(headers ? { headers } : {}) } },
  });
  const jsonRpcError = (description: string) => ({
    description,
    content: { 'application/json': { schema: ref('JsonRpcError') } },
  });

  /**
   * HEAD of a GET data route (RFC 9110 §9.3.2): the same parameters, checks and
   * statuses, GET's header fields, no body. It passes the gate, so it counts one (C23).
   */
  const headOfGet = (get: Json, counted: boolean): Json => ({
    tags: get.tags,
    summary: `${get.summary}, headers only`,
    description:
      'As GET, without the body: the same checks in the same order, the same status and header fields ' +
      `(\`Content-Length\` included).${counted ? ' Counts one request against the limits, like GET (C23).' : ''}`,
    ...(counted ? {} : PUBLIC),
    parameters: get.parameters,
    responses: Object.fromEntries(
      Object.keys(get.responses as Json).map((status) => [
        status,
        { description: `As GET's ${status}, headers only.` },
      ]),
    ),
  });

  /** What each operation says; its path and method come from the route table (routes.ts). */
  const ops = {
    getHome: {
      tags: ['meta'],
      summary: 'Where to start',
      description:
        'Public. A small HTML page (no script) linking the API reference (/docs), this document and /healthz, ' +
        'with a first request to copy.',
      ...PUBLIC,
      responses: {
        '200': { description: 'HTML page.', content: { 'text/html': { schema: { type: 'string' } } } },
      },
    },
    headHome: headOf('Where to start, headers only'),
    getHealth: {
      tags: ['meta'],
      summary: 'Liveness and data freshness',
      description:
        'Public. 200 while the newest data is fresh; 503 when it is older than `freshness_max_age_hours` ' +
        '(`stale`) or no snapshot is loaded (`empty`), so monitoring notices silently stale data (C31).',
      ...PUBLIC,
      responses: {
        '200': { description: 'Fresh data.', content: jsonOrMsgpack(ref('Health')) },
        '503': { description: 'Stale or no data.', content: jsonOrMsgpack(ref('Health')) },
      },
    },
    headHealth: {
      ...headOf('Liveness and data freshness, status only'),
      responses: {
        '200': { description: 'Fresh data; headers only.' },
        '503': { description: 'Stale or no data; headers only.' },
      },
    },
    getDirectoryClaim: {
      tags: ['meta'],
      summary: 'MCP directory ownership claim',
      description:
        'Public static JSON proving ownership for an MCP directory listing. The file name and content come from ' +
        'configuration (default name `glama`, i.e. `/.well-known/glama.json`); any other name, or none configured, ' +
        'is a 404 (C32).',
      ...PUBLIC,
      parameters: [
        {
          name: 'claim',
          in: 'path',
          required: true,
          description: 'Configured claim file name, without `.json`.',
          schema: { type: 'string', examples: ['glama'] },
        },
      ],
      responses: {
        '200': {
          description: 'The claim document.',
          content: { 'application/json': { schema: ref('DirectoryClaim') } },
        },
        '404': appError('No claim file with this name is configured.', NOT_FOUND_DETAIL),
      },
    },
    getApiCatalog: {
      tags: ['meta'],
      summary: 'API catalog (RFC 9727)',
      description: 'Public machine-readable index of this API as an RFC 9264 linkset (C33).',
      ...PUBLIC,
      responses: {
        '200': {
          description: 'The linkset.',
          headers: { Link: hdr('Link') },
          content: {
            'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"': {
              schema: ref('ApiCatalog'),
            },
          },
        },
      },
    },
    headApiCatalog: {
      tags: ['meta'],
      summary: 'API catalog headers',
      description:
        'As GET without a body: the `Link: </.well-known/api-catalog>; rel="api-catalog"` header (C33).',
      ...PUBLIC,
      responses: { '200': { description: 'Headers only.', headers: { Link: hdr('Link') } } },
    },
    getOpenApi: {
      tags: ['meta'],
      summary: 'This OpenAPI 3.1 document',
      description:
        'Public. Its examples are real answers from the data being served, refreshed with each snapshot.',
      ...PUBLIC,
      responses: {
        '200': {
          description: 'The OpenAPI document.',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
      },
    },
    headOpenApi: headOf('This OpenAPI 3.1 document, headers only'),
    getDocs: {
      tags: ['meta'],
      summary: 'Human-readable API documentation',
      description:
        'Public. The API reference (Swagger UI, served from this server: no CDN), drawn from /openapi.json.',
      ...PUBLIC,
      responses: {
        '200': { description: 'HTML page.', content: { 'text/html': { schema: { type: 'string' } } } },
      },
    },
    headDocs: headOf('Human-readable API documentation, headers only'),
    getProblemType: {
      tags: ['meta'],
      summary: 'What a problem type means',
      description:
        'The page each `type` URL of a 401, 403 or 429 answer points to (C22): a short HTML page saying what ' +
        'the problem means and what to do about it.',
      ...PUBLIC,
      parameters: [
        {
          name: 'slug',
          in: 'path',
          required: true,
          description: 'The problem slug.',
          schema: { type: 'string', enum: [...PROBLEM_SLUGS] },
        },
      ],
      responses: {
        '200': { description: 'HTML page.', content: { 'text/html': { schema: { type: 'string' } } } },
        '404': appError('No problem type of that name.', NOT_FOUND_DETAIL),
      },
    },
    listFunds: {
      tags: ['funds'],
      summary: 'Search or list funds',
      description:
        'Funds in ascending code order (byte order), filtered by `q`, `type`, `country` and `exchange` (combined ' +
        'with AND), paged by keyset `cursor` (C18, C19). Metadata only. Unknown query parameters are ignored.',
      parameters: queryParams(ListFundsQuerySchema.properties),
      responses: dataResponses(dataOk('One page of funds.', 'FundList', ex('listFunds')), 'list'),
    },
    getFund: {
      tags: ['funds'],
      summary: 'One fund by code',
      description: 'Metadata of one fund. An unknown code is a 404; an impossible one (C15) a 422.',
      parameters: [codePathParam, ...queryParams(FundQuerySchema.properties)],
      responses: dataResponses(dataOk('The fund.', 'Fund', ex('getFund'), 'PickedRow'), 'single'),
    },
    getTrailingReturns: {
      tags: ['returns'],
      summary: 'Trailing returns of one fund',
      description:
        "One row: the fund's latest, or the one anchored on its last observation on or before `as_of` (C3). " +
        'Unknown code, or no observation on or before `as_of`: 404.',
      parameters: [codePathParam, ...queryParams(TrailingQuerySchema.properties)],
      responses: dataResponses(
        dataOk('The trailing-returns row.', 'TrailingReturns', ex('getTrailingReturns'), 'PickedRow'),
        'single',
      ),
    },
    batchTrailingReturns: {
      tags: ['returns'],
      summary: 'Trailing returns of up to 100 funds',
      description:
        'One call, one request against the limits whatever the number of codes. Rows come in the order of the ' +
        'requested codes, duplicates once, misses silently left out (C16): compare the returned codes with the ' +
        'requested ones. Never a 404; more than 100 codes is a 422. Body over 1 MiB: 413; a body that is not ' +
        'JSON: 422 (C21).',
      requestBody: jsonBody('TrailingBatchRequest', 'Codes, and optionally an as-of date.'),
      responses: dataResponses(
        dataOk(
          'Rows found, in request order.',
          'TrailingReturnsList',
          ex('batchTrailingReturns'),
          'PickedRowList',
        ),
        'batch',
      ),
    },
    getCalendarReturns: {
      tags: ['returns'],
      summary: 'Calendar-year return of one fund',
      description:
        'One row for `year`, or the default year (C12). Unknown code, or no row for the year: 404. `year` outside ' +
        '1900..2100 or not an integer: 422 (C13).',
      parameters: [codePathParam, ...queryParams(CalendarQuerySchema.properties)],
      responses: dataResponses(
        dataOk('The calendar-year row.', 'CalendarReturn', ex('getCalendarReturns'), 'PickedRow'),
        'single',
      ),
    },
    batchCalendarReturns: {
      tags: ['returns'],
      summary: 'Calendar-year returns of up to 100 funds',
      description:
        'As the trailing batch: request order, duplicates once, misses (unknown code, or no row for the year) ' +
        'left out, never a 404, more than 100 codes a 422 (C14, C16).',
      requestBody: jsonBody('CalendarBatchRequest', 'Codes, and optionally a year.'),
      responses: dataResponses(
        dataOk(
          'Rows found, in request order.',
          'CalendarReturnList',
          ex('batchCalendarReturns'),
          'PickedRowList',
        ),
        'batch',
      ),
    },
    screenFunds: {
      tags: ['screen'],
      summary: 'Screen and rank funds by their figures',
      description:
        'Funds passing every filter (AND): the metadata filters of /v1/funds, `inactive`, and an inclusive ' +
        '`<figure>_min` / `<figure>_max` on any figure (`return_5y_min=8`, `history_years_min=5`, ' +
        '`volatility_3y_max=15`); a fund without a filtered figure does not pass. Sorted by `sort` (nulls last, ' +
        `ties by code), at most ${SCREEN_LIMIT_MAX} rows a page with a keyset cursor, each row \`code\`, \`name\`, ` +
        '`type` and the `fields` asked for (C50–C52). Figures as served (rounded, C1) are what filters and sorts ' +
        'compare. At the latest data only: an `as_of` screen would compute every figure of every fund for that ' +
        'date per request (C56). A figure name that does not exist, or a minimum above its maximum, is a 422 ' +
        'naming the parameter and listing the valid names (C54).',
      parameters: [
        ...queryParams(ScreenQuerySchema.properties),
        {
          name: 'filters',
          in: 'query',
          required: false,
          style: 'form',
          explode: true,
          description:
            'The bounds, one query parameter each: `<figure>_min` and `<figure>_max`, any figure `fields` ' +
            "names, inclusive, in the figure's unit (percent for returns).",
          schema: {
            type: 'object',
            patternProperties: { '^[a-z0-9_]+_(min|max)$': { type: 'number' } },
            additionalProperties: false,
          },
          example: { return_5y_min: 8, history_years_min: 5 },
        },
      ],
      responses: dataResponses(dataOk('One page of the screen.', 'ScreenPage', ex('screenFunds')), 'list'),
    },
    compareFunds: {
      tags: ['screen'],
      summary: `The same figures for up to ${COMPARE_MAX_CODES} funds`,
      description:
        'One row per known code, in the order asked, with `code`, `name`, `type` and the `fields` asked for, ' +
        `in that order (C53). More than ${COMPARE_MAX_CODES} codes, or an unknown figure, is a 422 (C54).`,
      parameters: queryParams(CompareQuerySchema.properties).map((p) =>
        p.name === 'codes' ? { ...p, required: true } : p,
      ),
      responses: dataResponses(
        dataOk('The rows, in request order.', 'FigureRowList', ex('compareFunds')),
        'batch',
      ),
    },
    getGrowth: {
      tags: ['returns'],
      summary: 'Growth of 10,000 over time',
      description:
        "The value of 10,000 invested at the fund's first observation on or after `from`, at each interval's " +
        `last observation up to \`to\` (C55), for charts. At most ${GROWTH_MAX_POINTS} points: more is a 422 at ` +
        '`interval` naming the limit, never a silently coarser series. No observation in the range: 404.\n\n' +
        "![The example fund's growth of 10,000, monthly, drawn from this server's data](docs/growth-example.svg)",
      parameters: [codePathParam, ...queryParams(GrowthQuerySchema.properties)],
      responses: dataResponses(dataOk('The growth series.', 'Growth', ex('getGrowth')), 'single'),
    },
    postMcp: {
      tags: ['meta'],
      summary: 'MCP endpoint (Streamable HTTP)',
      description:
        `Model Context Protocol over Streamable HTTP, stateless, JSON responses. Tools: ${MCP_TOOLS}, with the inputs of ` +
        'the matching REST endpoints. Same bearer key and plan limits; each HTTP request counts one (C30).',
      requestBody: {
        required: true,
        description: 'A JSON-RPC 2.0 message (or batch) of the MCP protocol.',
        content: { 'application/json': { schema: JSON_RPC_MESSAGES } },
      },
      responses: {
        '200': {
          description: 'JSON-RPC response.',
          headers: LIMIT_HEADERS,
          content: { 'application/json': { schema: JSON_RPC_MESSAGES } },
        },
        '202': { description: 'Accepted notification or response; no body.', headers: LIMIT_HEADERS },
        '400': {
          description:
            'A body that is not JSON (-32700), or JSON that is not a JSON-RPC 2.0 message (-32600); `id` null. ' +
            'A batch whose elements are none of them JSON-RPC 2.0 messages gets an array with one -32600 per ' +
            'element (a batch with some valid ones is answered 200, its invalid elements as -32600 entries in ' +
            'the array); an empty batch, or one holding `initialize` beside other messages, one -32600.',
          content: {
            'application/json': {
              schema: { oneOf: [ref('JsonRpcError'), { type: 'array', items: ref('JsonRpcError') }] },
            },
          },
        },
        '401': resp('Unauthorized'),
        '403': {
          description:
            'Valid key, but its account has no active subscription (problem+json, slug `forbidden`); or, ' +
            'before the key is checked and counting nothing, a browser `Origin` the server does not accept ' +
            "(a JSON-RPC error with `id` null: MCP's DNS-rebinding protection; the base URL's own origin " +
            'and those the operator lists are accepted, a request without `Origin` always).',
          headers: LIMIT_HEADERS,
          content: {
            'application/problem+json': { schema: ref('Problem') },
            'application/json': { schema: ref('JsonRpcError') },
          },
        },
        '406': jsonRpcError('`Accept` does not admit application/json (answers are always JSON).'),
        '413': resp('PayloadTooLarge'),
        '415': jsonRpcError('A `Content-Type` other than application/json.'),
        '429': resp('TooManyRequests'),
        '503': resp('ServiceUnavailable'),
      },
    },
    getMcp: {
      tags: ['meta'],
      // Answered 405 before any key is looked at.
      ...PUBLIC,
      summary: 'No server-sent event stream',
      description:
        'The endpoint is stateless and answers every request in its POST response, so it offers no stream to ' +
        'GET (as the MCP transport allows); DELETE has no session to end either.',
      responses: { '405': resp('MethodNotAllowed') },
    },
  } satisfies Partial<Record<OperationId, Json>>;
  const heads = {
    headDirectoryClaim: headOfGet(ops.getDirectoryClaim, false),
    headProblemType: headOfGet(ops.getProblemType, false),
    headListFunds: headOfGet(ops.listFunds, true),
    headFund: headOfGet(ops.getFund, true),
    headTrailingReturns: headOfGet(ops.getTrailingReturns, true),
    headCalendarReturns: headOfGet(ops.getCalendarReturns, true),
    headScreenFunds: headOfGet(ops.screenFunds, true),
    headCompareFunds: headOfGet(ops.compareFunds, true),
    headGrowth: headOfGet(ops.getGrowth, true),
  } satisfies Partial<Record<OperationId, Json>>;

  return {
    openapi: '3.1.0',
    info: {
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
    },
    servers: [
      opts.baseUrlDerived
        ? { url: '/', description: 'This server, where the document came from' }
        : { url: base },
    ],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'funds', description: 'Fund discovery and metadata.' },
      { name: 'returns', description: 'Trailing and calendar-year total returns.' },
      { name: 'screen', description: 'Screening, ranking and comparing funds by their figures.' },
      { name: 'meta', description: 'Health, discovery documents and the MCP endpoint.' },
    ],
    paths: pathsOf({ ...ops, ...heads }),
    components: {
      schemas,
      securitySchemes: {
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
      },
      headers: {
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
      },
      responses: {
        Unauthorized: problem(
          'Missing, malformed, unknown or revoked API key (problem slug `unauthorized`).',
          'unauthorized',
          {
            'WWW-Authenticate': hdr('WWW-Authenticate'),
          },
        ),
        Forbidden: problem(
          'Valid key, but its account has no active subscription (slug `forbidden`). Nothing is counted.',
          'forbidden',
          LIMIT_HEADERS,
        ),
        TooManyRequests: problem(
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
        PayloadTooLarge: appError(
          'Request body over 1 MiB (C21).',
          'Request body too large: the limit is 1 MiB',
          LIMIT_HEADERS,
        ),
        MethodNotAllowed: appError('Known route, other method (C21).', 'Method Not Allowed', {
          Allow: hdr('Allow'),
        }),
        ValidationFailed: {
          description: 'Invalid parameter or body, or more than 100 codes; every failure listed (C20).',
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
      },
    },
  };
}
