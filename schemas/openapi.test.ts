import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from './openapi.js';

type Json = Record<string, unknown>;

type Doc = {
  openapi: string;
  info: { version: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

describe('buildOpenApi', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const doc = buildOpenApi({ baseUrl: 'https://api.example.com/' });
    // The validator dereferences in place; keep the built document untouched.
    const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('names the configured base URL as its server; with none configured, the server it came from (`/`)', async () => {
    expect((buildOpenApi({ baseUrl: 'https://api.example.com' }) as Doc).servers).toEqual([
      { url: 'https://api.example.com' },
    ]);
    const local = buildOpenApi({ baseUrl: 'http://127.0.0.1:8080', baseUrlDerived: true });
    expect((local as Doc).servers[0].url).toBe('/');
    const result = await validate(structuredClone(local) as Parameters<typeof validate>[0]);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });
});

describe('buildOpenApi contents', () => {
  const doc = buildOpenApi({
    baseUrl: 'https://api.example.com',
    examples: { getFund: { code: 'VTI' } },
  }) as unknown as Doc;

  it('declares 3.1.0, version 1.0.0, the server and bearer auth', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers).toEqual([{ url: 'https://api.example.com' }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('has every endpoint', () => {
    const ops = Object.entries(doc.paths).flatMap(([p, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(ops.sort()).toEqual(
      [
        'GET /',
        'HEAD /',
        'GET /healthz',
        'HEAD /healthz',
        'HEAD /openapi.json',
        'HEAD /docs',
        'GET /problems/{slug}',
        'HEAD /problems/{slug}',
        'HEAD /.well-known/{claim}.json',
        'GET /mcp',
        'GET /.well-known/{claim}.json',
        'GET /.well-known/api-catalog',
        'HEAD /.well-known/api-catalog',
        'GET /openapi.json',
        'GET /docs',
        'GET /v1/funds',
        'HEAD /v1/funds',
        'GET /v1/funds/{code}',
        'HEAD /v1/funds/{code}',
        'GET /v1/funds/{code}/trailing-returns',
        'HEAD /v1/funds/{code}/trailing-returns',
        'HEAD /v1/funds/{code}/calendar-returns',
        'POST /v1/trailing-returns/batch',
        'GET /v1/funds/{code}/calendar-returns',
        'POST /v1/calendar-returns/batch',
        'GET /v1/funds/{code}/risk',
        'HEAD /v1/funds/{code}/risk',
        'POST /v1/risk/batch',
        'GET /v1/screen',
        'HEAD /v1/screen',
        'GET /v1/compare',
        'HEAD /v1/compare',
        'GET /v1/funds/{code}/growth',
        'HEAD /v1/funds/{code}/growth',
        'POST /mcp',
      ].sort(),
    );
  });

  it('data endpoints list their error responses and msgpack', () => {
    const get = doc.paths['/v1/funds/{code}'].get;
    expect(Object.keys(get.responses)).toEqual(['200', '401', '403', '404', '422', '429', '503']);
    const batch = doc.paths['/v1/trailing-returns/batch'].post;
    expect(Object.keys(batch.responses)).toEqual(['200', '401', '403', '413', '422', '429', '503']);
    expect(get.responses['200']).toMatchObject({
      content: {
        'application/json': {
          // With `fields` (C51) the row is a PickedRow.
          schema: {
            anyOf: [{ $ref: '#/components/schemas/Fund' }, { $ref: '#/components/schemas/PickedRow' }],
          },
          example: { code: 'VTI' },
        },
        'application/msgpack': {
          schema: {
            anyOf: [{ $ref: '#/components/schemas/Fund' }, { $ref: '#/components/schemas/PickedRow' }],
          },
        },
      },
      headers: { 'X-Data-As-Of': {} },
    });
    expect(doc.paths['/v1/funds'].get.responses['200']).not.toHaveProperty([
      'content',
      'application/json',
      'example',
    ]);
  });

  it('nested named schemas become $refs', () => {
    expect(doc.components.schemas.FundList).toMatchObject({
      properties: { data: { items: { $ref: '#/components/schemas/Fund' } } },
    });
    expect(doc.components.schemas.TrailingReturns).toMatchObject({
      properties: { extra_returns: { $ref: '#/components/schemas/ExtraReturns' } },
    });
  });

  it('leaves jsonSchemaDialect out: its schemas read the same in the default one, and Swagger UI flags any other', () => {
    expect(doc).not.toHaveProperty('jsonSchemaDialect');
  });

  it('gives each error status its own example: 404 a fund not found, 405, 413 and 503 their sentences', () => {
    const responses = (doc as unknown as { components: { responses: Record<string, Json> } }).components
      .responses;
    const detail = (name: string) =>
      (responses[name] as { content: Record<string, { example?: { detail: string } }> }).content[
        'application/json'
      ].example?.detail;
    expect(detail('NotFound')).toBe('No fund with code XYZ');
    expect(detail('MethodNotAllowed')).toBe('Method Not Allowed');
    expect(detail('PayloadTooLarge')).toBe('Request body too large: the limit is 1 MiB');
    expect(detail('ServiceUnavailable')).toBe('No data loaded');
  });

  it('GET /mcp needs no key (it is a 405 before the gate), and /mcp bodies say what their arrays hold', () => {
    const mcp = (doc as unknown as { paths: Record<string, Record<string, Json>> }).paths['/mcp'];
    expect(mcp.get.security).toEqual([]);
    expect(mcp.post).toMatchObject({
      requestBody: { content: { 'application/json': { schema: { items: { type: 'object' } } } } },
      responses: { '200': { content: { 'application/json': { schema: { items: { type: 'object' } } } } } },
    });
  });

  it('refers to every component it defines', () => {
    const text =
      JSON.stringify(doc.paths) + JSON.stringify((doc as unknown as { components: Json }).components);
    for (const name of Object.keys(doc.components.schemas))
      expect(text.includes(`"#/components/schemas/${name}"`), name).toBe(true);
  });

  it('the validator does reject a broken document', async () => {
    const broken = structuredClone(doc) as unknown as Record<string, unknown>;
    delete broken.info;
    const result = await validate(broken as Parameters<typeof validate>[0]);
    expect(result.valid).toBe(false);
  });
});
