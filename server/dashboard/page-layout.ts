/**
 * The frame of every dashboard page: one stylesheet and one small script, both
 * served by us (the Content-Security-Policy allows nothing else), a skip link, the
 * navigation of the signed-in person, and the page's own content.
 */
import type { Person } from '../../accounts/model.js';
import { type Html, html } from './html.js';

export const ASSET_CSS = '/account/assets/dashboard.css';
export const ASSET_JS = '/account/assets/dashboard.js';

export interface Frame {
  readonly title: string;
  /** The signed-in person (navigation, sign-out form), or null. */
  readonly person: Person | null;
  readonly csrf: string;
  /** The navigation entry to mark as current. */
  readonly current?: string;
  /** A sentence shown above the content (a done action, an error). */
  readonly notice?: { readonly kind: 'ok' | 'error'; readonly text: string } | null;
}

const PERSON_NAV: ReadonlyArray<readonly [string, string]> = [
  ['/account', 'Overview'],
  ['/account/keys', 'Keys'],
  ['/account/usage', 'Usage'],
  ['/account/plans', 'Plans'],
];

export function page(f: Frame, content: Html): string {
  const nav =
    f.person === null
      ? html`<a href="/account/login">Sign in</a> <a href="/account/signup">Create an account</a>`
      : html`${PERSON_NAV.map(
          ([href, label]) =>
            html`<a href="${href}"${f.current === href ? html` aria-current="page"` : ''}>${label}</a> `,
        )}${
          f.person.role === 'admin'
            ? html`<a href="/admin"${f.current === '/admin' ? html` aria-current="page"` : ''}>Admin</a> `
            : ''
        }<form method="post" action="/account/logout" class="inline"><input type="hidden" name="csrf" value="${f.csrf}"><button type="submit" class="link">Sign out</button></form>`;
  const notice =
    f.notice == null
      ? ''
      : html`<p class="notice ${f.notice.kind}" role="${f.notice.kind === 'error' ? 'alert' : 'status'}">${f.notice.text}</p>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${f.title} · Fund Returns</title>
<link rel="stylesheet" href="${ASSET_CSS}">
<script src="${ASSET_JS}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<a class="brand" href="/">Fund Returns</a>
<nav aria-label="Dashboard">${nav}</nav>
</header>
<main id="main">
<h1>${f.title}</h1>
${notice}
${content}
</main>
<footer><a href="/docs">API reference</a> · <a href="/">Home</a>${
    f.person === null ? '' : html` · Signed in as ${f.person.email}`
  }</footer>
</body>
</html>
`.text;
}

export const CSS = `
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:64rem;margin:0 auto;padding:0 1rem 2rem;color:#1f2328;background:#fff}
a{color:#0550ae}a:focus,button:focus,input:focus,select:focus{outline:3px solid #0969da;outline-offset:2px}
.skip{position:absolute;left:-10000px}.skip:focus{left:1rem;top:.5rem;background:#fff;padding:.25rem .5rem}
header{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;border-bottom:1px solid #d0d7de;padding:.75rem 0}
.brand{font-weight:700;text-decoration:none;color:#1f2328;margin-right:auto}
nav a{margin-right:.75rem}nav a[aria-current=page]{font-weight:700;text-decoration:none;color:#1f2328}
h1{font-size:1.6rem}h2{font-size:1.15rem;margin-top:1.6rem}
form.inline{display:inline}
label{display:block;font-weight:600;margin-top:.75rem}
input[type=text],input[type=email],input[type=password],input[type=search],select{font:inherit;padding:.4rem .5rem;border:1px solid #6e7781;border-radius:4px;min-width:18rem;max-width:100%}
button{font:inherit;padding:.4rem .9rem;border:1px solid #1f2328;border-radius:4px;background:#1f6feb;color:#fff;cursor:pointer;margin-top:.75rem}
button.secondary{background:#f6f8fa;color:#1f2328}button.danger{background:#cf222e;border-color:#a40e26}
button.link{background:none;border:none;color:#0550ae;text-decoration:underline;padding:0;margin:0}
table{border-collapse:collapse;width:100%;margin-top:.5rem}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #d0d7de;vertical-align:top}
td form{margin:0}td button{margin-top:0}
.notice{padding:.6rem .8rem;border-radius:4px;border:1px solid}.notice.ok{background:#dafbe1;border-color:#1a7f37}.notice.error{background:#ffebe9;border-color:#cf222e}
.secret{display:block;font:1rem ui-monospace,SFMono-Regular,Menlo,monospace;background:#f3f4f6;padding:.75rem;border-radius:4px;word-break:break-all}
.plans{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:1rem}.plan{border:1px solid #d0d7de;border-radius:6px;padding:1rem}.plan.current{border:2px solid #1f6feb}
.meter{width:100%;height:1rem}
.muted{color:#57606a}
.chart svg{max-width:100%;height:auto}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
footer{margin-top:3rem;border-top:1px solid #d0d7de;padding-top:.75rem;color:#57606a}
`;

/** The copy button: shown only where scripts run (without them the key is still there to select). */
export const JS = `
document.addEventListener('DOMContentLoaded', function () {
  document.querySelectorAll('button[data-copy]').forEach(function (b) {
    b.hidden = false;
    b.addEventListener('click', function () {
      var el = document.getElementById(b.getAttribute('data-copy'));
      if (!el || !navigator.clipboard) return;
      navigator.clipboard.writeText(el.textContent.trim()).then(function () {
        b.textContent = 'Copied';
      });
    });
  });
});
`;
