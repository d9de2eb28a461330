/**
 * A minimal browser for the dashboard's HTTP tests: keeps cookies, follows nothing by
 * itself, reads each page's form token, and sends forms as a browser does (urlencoded,
 * with the page's Origin), so each test can leave out exactly the part it checks.
 * Given a `localAddress` (127.0.0.2, …: Linux answers for all of 127/8 on loopback),
 * it connects from there, so the server sees another client; given an undici Agent
 * instead, fetch goes through it (a certificate to trust, a source address, a name
 * that resolves to loopback: test/proxy.test.ts).
 */
import { request } from 'node:http';
export interface Answer {
  status: number;
  headers: Headers;
  body: string;
  /** Set-Cookie lines of this answer. */
  setCookies: string[];
}

export class PageClient {
  readonly cookies = new Map<string, string>();
  /** The form token of the last page that had one. */
  csrf = '';

  constructor(
    readonly base: string,
    readonly via?: string | { dispatch: unknown },
  ) {}

  #cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  #keep(r: Raw): string[] {
    const lines = r.headers.getSetCookie();
    for (const line of lines) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return lines;
  }

  #read(r: Raw): Answer {
    const setCookies = this.#keep(r);
    const m = /name="csrf" value="([^"]+)"/.exec(r.body);
    if (m) this.csrf = m[1];
    return { status: r.status, headers: r.headers, body: r.body, setCookies };
  }

  async #send(path: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string) {
    if (typeof this.via !== 'string') {
      const init = { method, redirect: 'manual', headers, body, dispatcher: this.via } as RequestInit;
      const r = await fetch(this.base + path, init);
      return this.#read({ status: r.status, headers: r.headers, body: await r.text() });
    }
    return this.#read(await fromAddress(this.via, this.base + path, method, headers, body));
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
    return this.#send(path, 'GET', { cookie: this.#cookieHeader(), ...headers });
  }

  /** POST a form; `csrf` and `origin` default to what a browser on this site would send. */
  async post(
    path: string,
    form: Record<string, string>,
    opts: { csrf?: string | null; origin?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const fields = new URLSearchParams(form);
    const csrf = opts.csrf === undefined ? this.csrf : opts.csrf;
    if (csrf !== null) fields.set('csrf', csrf);
    const origin = opts.origin === undefined ? new URL(this.base).origin : opts.origin;
    return this.#send(
      path,
      'POST',
      {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: this.#cookieHeader(),
        ...(origin === null ? {} : { origin }),
        ...(opts.headers ?? {}),
      },
      fields.toString(),
    );
  }
}

interface Raw {
  status: number;
  headers: Headers;
  body: string;
}

/** One request over a new connection from `localAddress` (fetch cannot choose it). */
function fromAddress(
  localAddress: string,
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, localAddress, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const h = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          for (const v of Array.isArray(value) ? value : [value ?? '']) h.append(name, v);
        resolve({ status: res.statusCode ?? 0, headers: h, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The links the server's log mailer wrote for `to` (`{"msg":"account email",...}` lines), oldest first. */
export function mailedLinks(logs: string, to: string): string[] {
  const out: string[] = [];
  for (const line of logs.split('\n')) {
    if (!line.includes('"account email"')) continue;
    try {
      const v = JSON.parse(line) as { msg?: string; to?: string; link?: string };
      if (v.msg === 'account email' && v.to === to && typeof v.link === 'string') out.push(v.link);
    } catch {
      // Not a JSON line.
    }
  }
  return out;
}
