/**
 * A minimal browser for the dashboard's HTTP tests: keeps cookies, follows nothing by
 * itself, reads each page's form token, and sends forms as a browser does (urlencoded,
 * with the page's Origin), so each test can leave out exactly the part it checks.
 */
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

  /**
   * `dispatcher`: an undici Agent for what fetch alone cannot say (a certificate to
   * trust, a source address to send from).
   */
  constructor(
    readonly base: string,
    private readonly dispatcher?: unknown,
  ) {}

  private get extra(): Record<string, unknown> {
    return this.dispatcher === undefined ? {} : { dispatcher: this.dispatcher };
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(r: Response): string[] {
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

  private async read(r: Response): Promise<Answer> {
    const setCookies = this.keep(r);
    const body = await r.text();
    const m = /name="csrf" value="([^"]+)"/.exec(body);
    if (m) this.csrf = m[1];
    return { status: r.status, headers: r.headers, body, setCookies };
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
    const r = await fetch(this.base + path, {
      redirect: 'manual',
      headers: { cookie: this.cookieHeader(), ...headers },
      ...this.extra,
    });
    return this.read(r);
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
    const r = await fetch(this.base + path, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: this.cookieHeader(),
        ...(origin === null ? {} : { origin }),
        ...(opts.headers ?? {}),
      },
      body: fields.toString(),
      ...this.extra,
    });
    return this.read(r);
  }
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
