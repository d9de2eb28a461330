import { describe, expect, it } from 'vitest';
import { BenchError, checkTarget, luaScript, parseWrk } from './load.js';

describe('bench load generation', () => {
  it('refuses a target that is not this machine unless --url named it', () => {
    for (const url of ['http://10.0.0.5:8080', 'https://api.example.com', 'http://0.0.0.0:8080']) {
      expect(() => checkTarget(url, false)).toThrow(/without --url the bench only talks to 127\.0\.0\.1/);
      expect(checkTarget(url, true).href).toBe(new URL(url).href);
    }
    for (const url of ['http://127.0.0.1:9', 'http://localhost:9', 'http://[::1]:9'])
      expect(() => checkTarget(url, false)).not.toThrow();
    expect(() => checkTarget('ftp://127.0.0.1', true)).toThrow(BenchError);
    expect(() => checkTarget('not a url', true)).toThrow(/is not a URL/);
  });

  it('reads wrk’s figures: throughput, percentiles in any unit, socket errors and non-2xx', () => {
    const out = [
      'Running 1s test @ http://127.0.0.1:1234',
      '  Latency Distribution',
      '     50%  812.00us',
      '     75%    1.10ms',
      '     90%    2.50ms',
      '     99%    1.20s',
      '  50123 requests in 1.00s, 20.00MB read',
      '  Socket errors: connect 1, read 2, write 3, timeout 4',
      '  Non-2xx or 3xx responses: 7',
      'Requests/sec:  50100.25',
    ].join('\n');
    expect(parseWrk(out)).toEqual({
      rps: 50100.25,
      p50ms: 0.812,
      p90ms: 2.5,
      p99ms: 1200,
      requests: 50123,
      errors: 10,
      non2xx: 7,
    });
  });

  it('rotates through every pre-generated request and caps each wrk thread’s count', () => {
    const lua = luaScript(
      [
        { method: 'GET', path: '/v1/funds/A' },
        { method: 'POST', path: '/v1/trailing-returns/batch', body: '{"codes":["A"]}' },
      ],
      '127.0.0.1:8080',
      '/api',
      { Authorization: 'Bearer k' },
      500.7,
    );
    expect(lua).toContain('wrk.format("GET", "/api/v1/funds/A", h, nil)');
    expect(lua).toContain(
      'wrk.format("POST", "/api/v1/trailing-returns/batch", h, "{\\"codes\\":[\\"A\\"]}")',
    );
    expect(lua).toContain('["Host"]="127.0.0.1:8080"');
    expect(lua).toContain('local cap = 500');
    expect(lua).toContain('if sent > cap then wrk.thread:stop() end');
  });
});
