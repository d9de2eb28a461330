/**
 * What each operation of the OpenAPI document says, by operationId; its path and method
 * come from the route table (routes.ts). Grouped by kind so that each group fits on a
 * screen; `operations` joins them, and the compiler refuses an operationId left out.
 */

import { BATCH_MAX_CODES, MAX_BODY_TEXT } from './common.js';
import { PROBLEM_SLUGS } from './error-bodies.js';
import {
  appError,
  codePathParam,
  dataOk,
  dataResponses,
  hdr,
  headOf,
  headOfGet,
  JSON_RPC_MESSAGES,
  type Json,
  jsonBody,
  jsonOrMsgpack,
  jsonRpcError,
  LIMIT_HEADERS,
  MCP_TOOLS,
  NOT_FOUND_DETAIL,
  PUBLIC,
  queryParams,
  ref,
  resp,
} from './openapi-blocks.js';
import {
  CalendarQuerySchema,
  FundQuerySchema,
  ListFundsQuerySchema,
  TrailingQuerySchema,
} from './requests.js';
import { RiskQuerySchema } from './risk.js';
import type { OperationId } from './routes.js';
import {
  COMPARE_MAX_CODES,
  CompareQuerySchema,
  GROWTH_MAX_POINTS,
  GrowthQuerySchema,
  SCREEN_LIMIT_MAX,
  ScreenQuerySchema,
} from './screen.js';

/** Example 200 bodies by operationId (the server fills them from real data). */
type Examples = (operationId: string) => unknown;

/** The home page, /healthz and the directory claim. */
function homeOperations() {
  return {
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
  } satisfies Partial<Record<OperationId, Json>>;
}

/** The discovery documents: API catalog, this document, its reference and the problem pages. */
function discoveryOperations() {
  return {
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
  } satisfies Partial<Record<OperationId, Json>>;
}

/** The fund routes under /v1 (their 200 examples are real answers). */
function fundOperations(ex: Examples) {
  return {
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
  } satisfies Partial<Record<OperationId, Json>>;
}

/** The return routes under /v1 (their 200 examples are real answers). */
function returnOperations(ex: Examples) {
  return {
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
      summary: `Trailing returns of up to ${BATCH_MAX_CODES} funds`,
      description:
        'One call, one request against the limits whatever the number of codes. Rows come in the order of the ' +
        'requested codes, duplicates once, misses silently left out (C16): compare the returned codes with the ' +
        `requested ones. Never a 404; more than ${BATCH_MAX_CODES} codes is a 422. Body over ${MAX_BODY_TEXT}: 413; a body that is not ` +
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
      summary: `Calendar-year returns of up to ${BATCH_MAX_CODES} funds`,
      description:
        'As the trailing batch: request order, duplicates once, misses (unknown code, or no row for the year) ' +
        `left out, never a 404, more than ${BATCH_MAX_CODES} codes a 422 (C14, C16).`,
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
  } satisfies Partial<Record<OperationId, Json>>;
}

/** The risk figures (C38–C46). */
function riskOperations(ex: Examples) {
  return {
    getRiskFigures: {
      tags: ['risk'],
      summary: 'Risk figures of one fund',
      description:
        'Volatility, Sharpe and Sortino ratios, maximum drawdown with its dates, best and worst month, positive ' +
        'months, beta and correlation, over windows of 1, 3, 5 and 10 years of month-end returns (C38–C46): the ' +
        "latest, or anchored on the fund's last observation on or before `as_of` (C3). Beta and correlation are " +
        "against `benchmark`, else the server's default. Unknown code, or no observation on or before `as_of`: " +
        '404; a benchmark not in the universe: 422 naming it.',
      parameters: [codePathParam, ...queryParams(RiskQuerySchema.properties)],
      responses: dataResponses(dataOk('The risk row.', 'RiskFigures', ex('getRiskFigures')), 'single'),
    },
    batchRiskFigures: {
      tags: ['risk'],
      summary: `Risk figures of up to ${BATCH_MAX_CODES} funds`,
      description:
        `As the single-fund risk row, for up to ${BATCH_MAX_CODES} codes at one \`as_of\` and one \`benchmark\`: request order, ` +
        `duplicates once, misses left out (C16), never a 404; more than ${BATCH_MAX_CODES} codes, or a benchmark not in the ` +
        'universe, is a 422.',
      requestBody: jsonBody('RiskBatchRequest', 'Codes, and optionally an as-of date and a benchmark.'),
      responses: dataResponses(
        dataOk('Rows found, in request order.', 'RiskFiguresList', ex('batchRiskFigures')),
        'batch',
      ),
    },
  } satisfies Partial<Record<OperationId, Json>>;
}

/** Screening, comparing and growth of 10,000 (C50–C56). */
function screenOperations(ex: Examples) {
  return {
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
  } satisfies Partial<Record<OperationId, Json>>;
}

/** The MCP endpoint. */
function mcpOperations() {
  return {
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
}

/** Each operation, HEAD of the GET data routes included. */
export function operations(ex: Examples): Record<OperationId, Json> {
  const ops = {
    ...homeOperations(),
    ...discoveryOperations(),
    ...fundOperations(ex),
    ...returnOperations(ex),
    ...riskOperations(ex),
    ...screenOperations(ex),
    ...mcpOperations(),
  };
  const heads = {
    headDirectoryClaim: headOfGet(ops.getDirectoryClaim, false),
    headProblemType: headOfGet(ops.getProblemType, false),
    headListFunds: headOfGet(ops.listFunds, true),
    headFund: headOfGet(ops.getFund, true),
    headTrailingReturns: headOfGet(ops.getTrailingReturns, true),
    headCalendarReturns: headOfGet(ops.getCalendarReturns, true),
    headRiskFigures: headOfGet(ops.getRiskFigures, true),
    headScreenFunds: headOfGet(ops.screenFunds, true),
    headCompareFunds: headOfGet(ops.compareFunds, true),
    headGrowth: headOfGet(ops.getGrowth, true),
  } satisfies Partial<Record<OperationId, Json>>;
  return { ...ops, ...heads };
}
