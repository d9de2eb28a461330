/** Public documents: /healthz (C31), the directory claim (C32), the API catalog (C33). */
import { NullableDateSchema } from './common.js';

const HEALTH_STATUSES = ['ok', 'stale', 'empty'] as const;

export const HealthSchema = {
  title: 'Health',
  type: 'object',
  description:
    'Liveness and data freshness (C31). 200 with `status` `ok`; 503 with `stale` (newest data older than ' +
    '`freshness_max_age_hours`) or `empty` (no snapshot loaded).',
  required: ['status', 'data_as_of', 'data_age_hours', 'freshness_max_age_hours', 'snapshot', 'version'],
  properties: {
    status: {
      type: 'string',
      enum: HEALTH_STATUSES,
      description: '`ok`, `stale` or `empty`.',
      examples: ['ok'],
    },
    data_as_of: {
      ...NullableDateSchema,
      description: 'Newest as_of date in the loaded data; null when no snapshot is loaded.',
    },
    data_age_hours: {
      type: ['number', 'null'],
      description:
        'Hours since 16:00 America/New_York (the US close) on `data_as_of`; null when no snapshot is loaded.',
      examples: [20.5],
    },
    freshness_max_age_hours: {
      type: 'number',
      description: 'Age above which the data counts as stale (default 120, configurable).',
      examples: [120],
    },
    snapshot: {
      type: ['object', 'null'],
      description: 'The snapshot in service, or null.',
      required: ['id', 'funds', 'loaded_at'],
      properties: {
        id: { type: 'string', description: 'Snapshot id (`<as_of>-<build id>`).' },
        funds: { type: 'integer', minimum: 0, description: 'Number of funds in the snapshot.' },
        loaded_at: { type: 'string', format: 'date-time', description: 'When this server loaded it (UTC).' },
      },
    },
    version: { type: 'string', description: 'Server version.', examples: ['1.0.0'] },
    last_error: {
      type: 'string',
      description:
        'Present only when a newer snapshot was refused (or CURRENT cannot be read): why, as `CODE: sentence` ' +
        '(e.g. `CHECKSUM_MISMATCH: snapshot <id> refused: series.arrow: …`), without paths; the detail is in the ' +
        'server log. The snapshot named in `snapshot` goes on serving.',
      examples: [
        'CURRENT_INVALID: CURRENT does not hold the name of a snapshot in the snapshots directory (detail in the server log)',
      ],
    },
  },
} as const;

export const DirectoryClaimSchema = {
  title: 'DirectoryClaim',
  type: 'object',
  description:
    'Ownership-verification file for an MCP directory listing (C32). Name and content come from configuration; ' +
    'for Glama it is served at `/.well-known/glama.json` as `{"$schema": "https://glama.ai/mcp/schemas/connector.json", "claim": "…"}`.',
  properties: {
    $schema: { type: 'string', format: 'uri', description: 'Schema of the claim document.' },
    claim: { type: 'string', description: 'The claim token.' },
  },
  examples: [{ $schema: 'https://glama.ai/mcp/schemas/connector.json', claim: 'example-claim' }],
} as const;

const linkTarget = (description: string, type: string) =>
  ({
    type: 'array',
    description,
    items: {
      type: 'object',
      required: ['href'],
      properties: {
        href: { type: 'string', format: 'uri', description: 'Target URL.' },
        type: { type: 'string', description: 'Media type of the target.', examples: [type] },
      },
    },
  }) as const;

export const ApiCatalogSchema = {
  title: 'ApiCatalog',
  type: 'object',
  description:
    'RFC 9727 API catalog as an RFC 9264 linkset (`application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"`, C33). ' +
    'Every relation is an array.',
  required: ['linkset'],
  properties: {
    linkset: {
      type: 'array',
      items: {
        type: 'object',
        required: ['anchor'],
        properties: {
          anchor: { type: 'string', format: 'uri', description: '`<base URL>/v1`.' },
          'service-desc': linkTarget('The OpenAPI 3.1 document.', 'application/vnd.oai.openapi+json'),
          'service-doc': linkTarget('Human-readable documentation.', 'text/html'),
          status: linkTarget('Health endpoint.', 'application/json'),
        },
      },
    },
  },
} as const;
