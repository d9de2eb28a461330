/**
 * A signed-in person of a dashboard under benchmark: sign up (the link read from the
 * log mailer's line in the server's output), verify, sign in; their cookies.
 */
import type { Started } from '../cli/bench/processes.js';

export async function signedInCookie(
  url: string,
  s: Started,
  email: string,
  password = 'benchmark password',
): Promise<string> {
  const jar = new Map<string, string>();
  const keep = (r: Response) => {
    for (const line of r.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const form = async (path: string, fields: Record<string, string>) => {
    const page = await fetch(url + path, { headers: { cookie: cookie() }, redirect: 'manual' });
    keep(page);
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    const r = await fetch(url + path, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url, cookie: cookie() },
      body: new URLSearchParams({ ...fields, csrf }).toString(),
    });
    keep(r);
    await r.text();
    return r;
  };
  await form('/account/signup', { email, password });
  let link = '';
  for (let i = 0; i < 400 && link === ''; i++) {
    const line = s
      .output()
      .split('\n')
      .find((l) => l.includes('"account email"') && l.includes(email));
    link = line === undefined ? '' : (JSON.parse(line) as { link: string }).link;
    if (link === '') await new Promise((r) => setTimeout(r, 25));
  }
  if (link === '') throw new Error(`no verification email for ${email}`);
  const u = new URL(link);
  await fetch(url + u.pathname + u.search, { redirect: 'manual' });
  const r = await form('/account/login', { email, password });
  if (r.status !== 303) throw new Error(`sign-in failed: ${r.status}`);
  return cookie();
}
