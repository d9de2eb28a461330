/**
 * Content negotiation and 422 echoes end to end: a real `fundreturns serve`
 * process over a small generated snapshot, spoken to with raw HTTP requests (fetch
 * would decompress by itself and hide Content-Encoding).
 */

import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { unpack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServedUniverse, type TestAccess } from './harness.js';

let dir: string;
let server: ServerProcess;
let codes: string[];
let access!: TestAccess;

beforeAll(async () => {
  ({ dir, codes, access, server } = await startServedUniverse('negotiation'));
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Raw {
  status: number;
  type: string | undefined;
  encoding: string | undefined;
  /** The body as it came over the wire (still compressed, if it was). */
  body: Buffer;
}

function raw(path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(
      server.url + path,
      { method: body === undefined ? 'GET' : 'POST', headers: { ...access.headers, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: res.headers['content-type'],
            encoding: res.headers['content-encoding'],
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A batch of 100 codes: large enough to be compressed (over 8 KiB of JSON). */
function bigBatch(headers: Record<string, string>): Promise<Raw> {
  return raw(
    '/v1/trailing-returns/batch',
    { 'content-type': 'application/json', ...headers },
    JSON.stringify({ codes: codes.slice(0, 100) }),
  );
}

function decoded(r: Raw): Buffer {
  if (r.encoding === 'gzip') return gunzipSync(r.body);
  if (r.encoding === 'br') return brotliDecompressSync(r.body);
  return r.body;
}

describe('Accept-Encoding (RFC 9110 §12.5.3)', () => {
  it('Accept-Encoding gzip;q=0 is not compressed (RFC 9110)', async () => {
    const r = await bigBatch({ 'accept-encoding': 'gzip;q=0' });
    expect(r.status).toBe(200);
    expect(r.encoding).toBeUndefined();
    expect(JSON.parse(r.body.toString())).toHaveLength(100);
  });

  it('Accept-Encoding br;q=0, gzip is gzip-compressed (RFC 9110)', async () => {
    const r = await bigBatch({ 'accept-encoding': 'br;q=0, gzip' });
    expect(r.encoding).toBe('gzip');
    expect(JSON.parse(decoded(r).toString())).toHaveLength(100);
  });

  it('Accept-Encoding tokens are case-insensitive: GZIP is gzip (RFC 9110)', async () => {
    const r = await bigBatch({ 'accept-encoding': 'GZIP' });
    expect(r.encoding).toBe('gzip');
    expect(JSON.parse(decoded(r).toString())).toHaveLength(100);
  });

  it('Accept-Encoding *;q=0 and identity are not compressed; * alone is br (RFC 9110)', async () => {
    for (const header of ['*;q=0', 'identity']) {
      const r = await bigBatch({ 'accept-encoding': header });
      expect(r.encoding, header).toBeUndefined();
      expect(JSON.parse(r.body.toString())).toHaveLength(100);
    }
    const any = await bigBatch({ 'accept-encoding': '*' });
    expect(any.encoding).toBe('br');
    expect(JSON.parse(decoded(any).toString())).toHaveLength(100);
  });

  it('a large GET answered in its route callback honours weights too (RFC 9110)', async () => {
    const r = await raw('/v1/funds?limit=100', { 'accept-encoding': 'gzip;q=0.5, br;q=0' });
    expect(r.encoding).toBe('gzip');
    expect(JSON.parse(decoded(r).toString()).data).toHaveLength(100);
  });
});

describe('Accept: MessagePack or JSON (RFC 9110 §12.5.1)', () => {
  // A single fund is answered by the direct path (app.ts directRow), a batch through Call.reply.
  const paths = () => [`/v1/funds/${codes[0]}`, `/v1/funds/${codes[0]}/trailing-returns`];

  it('Accept application/msgpack;q=0 gets JSON (RFC 9110)', async () => {
    for (const path of paths()) {
      const r = await raw(path, { accept: 'application/msgpack;q=0' });
      expect(r.status, path).toBe(200);
      expect(r.type, path).toBe('application/json');
      expect(() => JSON.parse(r.body.toString())).not.toThrow();
    }
    const b = await bigBatch({ accept: 'application/msgpack;q=0' });
    expect(b.type).toBe('application/json');
    expect(JSON.parse(b.body.toString())).toHaveLength(100);
  });

  it('Accept with msgpack weighted below JSON gets JSON (RFC 9110)', async () => {
    const r = await raw(paths()[1], { accept: 'application/msgpack;q=0.5, application/json' });
    expect(r.type).toBe('application/json');
    expect(() => JSON.parse(r.body.toString())).not.toThrow();
  });

  it('Accept APPLICATION/MSGPACK (any case) gets MessagePack (RFC 9110)', async () => {
    for (const path of paths()) {
      const json = await raw(path, {});
      const r = await raw(path, { accept: 'APPLICATION/MSGPACK' });
      expect(r.status, path).toBe(200);
      expect(r.type, path).toBe('application/msgpack');
      expect(unpack(r.body)).toEqual(JSON.parse(json.body.toString()));
    }
  });

  it('Accept with msgpack weighted above JSON gets MessagePack (RFC 9110)', async () => {
    const r = await bigBatch({ accept: 'application/msgpack, application/json;q=0.9' });
    expect(r.type).toBe('application/msgpack');
    expect(unpack(decoded(r))).toHaveLength(100);
  });
});

describe('422 details echo what was sent (C20)', () => {
  const detail = (r: Raw) => JSON.parse(r.body.toString()).detail;

  it('a path code that is not UTF-8 once decoded (%FF) reads U+FFFD, as FastAPI reads it: 404 naming it (C15, C21)', async () => {
    for (const path of [
      '/v1/funds/%FF',
      '/v1/funds/%FF/trailing-returns',
      '/v1/funds/%FF/calendar-returns',
    ]) {
      const r = await raw(path, {});
      expect(r.status, path).toBe(404);
      expect(JSON.parse(r.body.toString()), path).toEqual({ detail: 'No fund with code \ufffd' });
    }
  });

  it('as_of with a five-digit year says what speedate says: a digit where `-` belongs (C20)', async () => {
    const r = await raw(`/v1/funds/${codes[0]}/trailing-returns?as_of=10000-01-01`, {});
    expect(r.status).toBe(422);
    expect(detail(r)).toEqual([
      {
        type: 'date_from_datetime_parsing',
        loc: ['query', 'as_of'],
        msg: 'Input should be a valid date or datetime, invalid date separator, expected `-`',
        input: '10000-01-01',
        ctx: { error: 'invalid date separator, expected `-`' },
      },
    ]);
  });

  it('a batch year of 1e400 is finite_number echoing "Infinity", not null (C20)', async () => {
    const r = await raw(
      '/v1/calendar-returns/batch',
      { 'content-type': 'application/json' },
      `{"codes":["${codes[0]}"],"year":1e400}`,
    );
    expect(r.status).toBe(422);
    expect(detail(r)).toEqual([
      {
        type: 'finite_number',
        loc: ['body', 'year'],
        msg: 'Input should be a finite number',
        input: 'Infinity',
      },
    ]);
  });
});
