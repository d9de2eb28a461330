/**
 * The building blocks of the OpenAPI document: references, parameters, the answers of a
 * data route, problem examples and the HEAD twin of a GET, shared by its operations
 * (openapi-operations.ts) and components (openapi-components.ts).
 */
import { CodeSchema } from './common.js';
import type { PROBLEM_SLUGS } from './error-bodies.js';
import { SCHEMAS, type SchemaName } from './index.js';
import { ROUTES, type RouteDecl } from './routes.js';

export type Json = Record<string, unknown>;

export const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });

/** Object identity → component name, so nested reuse of a named schema becomes a `$ref`. */
const NAME_OF = new Map<unknown, SchemaName>(
  (Object.entries(SCHEMAS) as [SchemaName, unknown][]).map(([name, schema]) => [schema, name]),
);

/** Deep copy, replacing every nested named schema (but not the root) with its `$ref`. */
export function copyWithRefs(value: unknown, root: boolean): unknown {
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

export function queryParams(props: Record<string, { description?: string }>): Json[] {
  return Object.entries(props).map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    description: schema.description,
    schema: inline(schema),
  }));
}

export const codePathParam = {
  name: 'code',
  in: 'path',
  required: true,
  description: CodeSchema.description,
  schema: inline(CodeSchema),
};

export const hdr = (name: string) => ({ $ref: `#/components/headers/${name}` });
export const resp = (name: string) => ({ $ref: `#/components/responses/${name}` });

export const LIMIT_HEADERS = { RateLimit: hdr('RateLimit'), 'RateLimit-Policy': hdr('RateLimit-Policy') };

/** 200 of a data endpoint: JSON by default, MessagePack on `Accept: application/msgpack`. */
export function dataOk(description: string, schema: SchemaName, example: unknown, picked?: SchemaName): Json {
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

export function dataResponses(ok: Json, kind: 'single' | 'batch' | 'list'): Json {
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

export const jsonBody = (name: SchemaName, description: string) => ({
  required: true,
  description:
    `${description} Sent as \`Content-Type: application/json\` (or \`application/*+json\`); a body ` +
    'of any other type, or with none, is a 422 `model_attributes_type` (C21).',
  content: { 'application/json': { schema: ref(name) } },
});

export const PUBLIC = { security: [] };

/** C21's body for a path with nothing there. */
export const NOT_FOUND_DETAIL = 'Not Found';

/** /mcp's body and answer: one JSON-RPC 2.0 message, or a batch of them. */
export const JSON_RPC_MESSAGES = {
  type: ['object', 'array'],
  // Said outright: generated clients read a bare `type: object` as an object with no keys.
  additionalProperties: true,
  items: { type: 'object', additionalProperties: true },
  description: 'A JSON-RPC 2.0 message (an object), or a batch of them (an array of objects).',
};

export type ProblemSlug = (typeof PROBLEM_SLUGS)[number];

/**
 * Title, status and an example detail of each gateway refusal, as the server words
 * them (server/public/problems.ts, server/access/key-gate.ts): server/resources.test.ts
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
export const MCP_TOOLS = ROUTES.flatMap((r: RouteDecl) => (r.mcpTool === undefined ? [] : [r.mcpTool])).join(
  ', ',
);

/**
 * A gateway refusal (C22) with its own example: without one a viewer draws every
 * status from the schema's property examples, and a 401 would show a 429 body.
 */
export const problem = (base: string, description: string, slug: ProblemSlug, extraHeaders: Json = {}) => ({
  description,
  headers: extraHeaders,
  content: {
    'application/problem+json': { schema: ref('Problem'), example: problemExample(base, slug) },
  },
});
// Every JSON answer of the server, errors and /healthz included, comes as MessagePack on
// `Accept: application/msgpack` (server/http/call.ts).
export const jsonOrMsgpack = (schema: Json, example?: unknown) => ({
  'application/json': example === undefined ? { schema } : { schema, example },
  'application/msgpack': { schema },
});
/** A `{"detail": …}` answer (C21), with the sentence this status actually says. */
export const appError = (description: string, detail: string, headers?: Json) => ({
  description,
  ...(headers ? { headers } : {}),
  content: jsonOrMsgpack(ref('AppError'), { detail }),
});
export const headOf = (summary: string, headers?: Json): Json => ({
  tags: ['meta'],
  summary,
  description: 'As GET, without the body (the headers and `Content-Length` GET would send).',
  ...PUBLIC,
  responses: { '200': { description: 'Headers only.', ...(headers ? { headers } : {}) } },
});
export const jsonRpcError = (description: string) => ({
  description,
  content: { 'application/json': { schema: ref('JsonRpcError') } },
});

/**
 * HEAD of a GET data route (RFC 9110 §9.3.2): the same parameters, checks and
 * statuses, GET's header fields, no body. It passes the gate, so it counts one (C23).
 */
export const headOfGet = (get: Json, counted: boolean): Json => ({
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
