/**
 * Account emails: a verification link at sign-up, a reset link for a
 * forgotten password. Two ways out, chosen at start by `--smtp-url`:
 * - SMTP through nodemailer (`smtp://user:pass@host:port`, `smtps://` for TLS from the
 *   first byte; a plain `smtp://` server that offers STARTTLS is upgraded);
 * - without it, each message is one JSON line in the server's log
 *   (`{"msg":"account email","to":…,"link":…}`), so a one-box operator can still
 *   onboard people by reading the log. Nothing else of the message is logged.
 */
import { createTransport } from 'nodemailer';
import { redactUrl } from '../../accounts/redact-url.js';
import { escapeHtml } from '../../core/escape.js';

interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** The one link the message carries: what the log mailer writes. */
  link: string;
}

export interface Mailer {
  /** Resolves once the message is handed over; rejects with an Error that says why not. */
  send(msg: MailMessage): Promise<void>;
}

/** What `--smtp-url` and `--mail-from` gave (the flags' parsing is the CLI's). */
export interface MailConfig {
  smtpUrl: string | null;
  mailFrom: string | null;
}

/** The log mailer's line: these three fields and nothing else of the message. */
export interface AccountEmailLine {
  msg: 'account email';
  to: string;
  link: string;
}

/** The JSON-lines logger's call for one line, e.g. `(line) => logger.info(line)`. */
export type MailLog = (line: AccountEmailLine) => void;

/** Waits for a server that accepts but never answers, so a sign-up cannot hang forever. */
export const SMTP_TIMEOUTS = {
  connectionTimeout: 10_000,
  greetingTimeout: 10_000,
  socketTimeout: 30_000,
  dnsTimeout: 10_000,
};

/**
 * One plain address (`name@host`), never a list or a display name: an address field
 * that a person typed must not become two recipients or a header.
 */
const SINGLE_ADDRESS = /^[^\s@,;:<>()[\]"\\]+@[^\s@,;:<>()[\]"\\]+$/;

function recipientProblem(to: string): string | null {
  return SINGLE_ADDRESS.test(to) && to.length <= 254
    ? null
    : `not a single email address: ${JSON.stringify(to)}`;
}

interface SmtpTarget {
  host: string;
  port: number;
  secure: boolean;
  user: string | null;
  pass: string | null;
}

function parseSmtpUrl(spec: string): SmtpTarget | string {
  let u: URL;
  try {
    u = new URL(spec);
  } catch {
    return `--smtp-url must be smtp://[user:pass@]host[:port] or smtps://…, not ${JSON.stringify(redactUrl(spec))}`;
  }
  const shown = JSON.stringify(redactUrl(spec));
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:')
    return `--smtp-url must start with smtp:// or smtps:// (TLS), not ${shown}`;
  if (u.hostname === '') return `--smtp-url has no host: ${shown}`;
  if ((u.pathname !== '' && u.pathname !== '/') || u.search !== '' || u.hash !== '')
    return `--smtp-url takes no path, query or fragment: ${shown}`;
  const secure = u.protocol === 'smtps:';
  let user: string | null = null;
  let pass: string | null = null;
  try {
    user = u.username === '' ? null : decodeURIComponent(u.username);
    pass = u.password === '' ? null : decodeURIComponent(u.password);
  } catch {
    return `--smtp-url has a malformed %-escape in its user or password: ${shown}`;
  }
  if (pass !== null && user === null) return `--smtp-url has a password but no user: ${shown}`;
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: u.port === '' ? (secure ? 465 : 587) : Number(u.port),
    secure,
    user,
    pass,
  };
}

/** Why `--smtp-url`'s value cannot be used, as a sentence (its password hidden), or null. */
export function smtpUrlProblem(spec: string): string | null {
  const t = parseSmtpUrl(spec);
  return typeof t === 'string' ? t : null;
}

/** Why `--mail-from`'s value cannot be used, or null: an address, or `Name <address>`. */
export function mailFromProblem(from: string): string | null {
  const m = /^(?:([^<>\r\n"]*?)\s*<([^<>]+)>|([^<>\s]+))$/.exec(from.trim());
  const address = m === null ? null : (m[2] ?? m[3]);
  if (address === null || recipientProblem(address) !== null)
    return `--mail-from must be an address (dashboard@example.com) or "Name <address>", not ${JSON.stringify(from)}`;
  return null;
}

/**
 * Messages through an SMTP server. A message that cannot be handed over (connection
 * refused, authentication refused, recipient refused, a timeout) rejects with an
 * Error naming the server (password hidden) and the server's reason; what the person
 * is shown is the caller's choice.
 */
export function smtpMailer(
  smtpUrl: string,
  mailFrom: string,
  timeouts: Partial<typeof SMTP_TIMEOUTS> = {},
): Mailer {
  const target = parseSmtpUrl(smtpUrl);
  if (typeof target === 'string') throw new Error(target);
  const fromProblem = mailFromProblem(mailFrom);
  if (fromProblem !== null) throw new Error(fromProblem);
  const transport = createTransport(
    {
      host: target.host,
      port: target.port,
      secure: target.secure,
      ...(target.user === null ? {} : { auth: { user: target.user, pass: target.pass ?? '' } }),
      ...SMTP_TIMEOUTS,
      ...timeouts,
    },
    { from: mailFrom.trim() },
  );
  const shown = redactUrl(smtpUrl);
  return {
    async send(msg) {
      const bad = recipientProblem(msg.to);
      if (bad !== null) throw new Error(`email not sent: ${bad}`);
      try {
        await transport.sendMail({
          to: msg.to,
          subject: msg.subject,
          text: msg.text,
          ...(msg.html === undefined ? {} : { html: msg.html }),
        });
      } catch (e) {
        const err = e as Error & { code?: string };
        throw new Error(
          `email to ${msg.to} not sent through ${shown}: ${err.message}${err.code === undefined ? '' : ` (${err.code})`}`,
          { cause: e },
        );
      }
    },
  };
}

/** Messages as one JSON line each through `log`: the address and the link, no more. */
export function logMailer(log: MailLog): Mailer {
  return {
    async send(msg) {
      const bad = recipientProblem(msg.to);
      if (bad !== null) throw new Error(`email not sent: ${bad}`);
      log({ msg: 'account email', to: msg.to, link: msg.link });
    },
  };
}

/** The mailer the configuration asks for; throws, saying why, on a value it cannot use. */
export function mailerFrom(config: MailConfig, log: MailLog): Mailer {
  if (config.smtpUrl === null) return logMailer(log);
  if (config.mailFrom === null)
    throw new Error('--smtp-url needs --mail-from: the address account emails come from');
  return smtpMailer(config.smtpUrl, config.mailFrom);
}

/** The line the server logs at start: where account emails go (the SMTP password hidden). */
export function describeMailer(config: MailConfig): string {
  if (config.smtpUrl === null) return 'no --smtp-url: account emails are written to the log as JSON lines';
  return `account emails go out through ${redactUrl(config.smtpUrl)} from ${config.mailFrom ?? '(no --mail-from)'}`;
}

const hours = (n: number): string => (n === 1 ? '1 hour' : `${n} hours`);

/** A message's subject, text and HTML around one link, and the link itself. */
export type AccountEmail = Omit<MailMessage, 'to'>;

function linkEmail(
  link: string,
  subject: string,
  intro: string,
  action: string,
  after: string,
): AccountEmail {
  const u = new URL(link);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error(`not an http(s) link: ${link}`);
  const text = `${intro}\n\n${action}:\n${link}\n\n${after}\n\n-- Fund Returns\n`;
  const html =
    '<!doctype html><html><body style="font-family: sans-serif; line-height: 1.5">' +
    `<p>${escapeHtml(intro)}</p>` +
    `<p><a href="${escapeHtml(link)}">${escapeHtml(action)}</a></p>` +
    `<p>If the link does not open, copy this address into your browser:<br>${escapeHtml(link)}</p>` +
    `<p>${escapeHtml(after)}</p>` +
    '<p>-- Fund Returns</p></body></html>';
  return { subject, text, html, link };
}

/** The sign-up message: confirm the address before the first key. */
export function verifyEmail(link: string, validHours = 24): AccountEmail {
  return linkEmail(
    link,
    'Confirm your email address for Fund Returns',
    'Someone, probably you, signed up for Fund Returns with this email address.',
    'Confirm your address',
    `The link works once, for ${hours(validHours)}. If you did not sign up, ignore this email: no account is used until the address is confirmed.`,
  );
}

/** The forgotten-password message. */
export function resetEmail(link: string, validHours = 1): AccountEmail {
  return linkEmail(
    link,
    'Reset your Fund Returns password',
    'Someone, probably you, asked to reset the password of the Fund Returns account with this email address.',
    'Choose a new password',
    `The link works once, for ${hours(validHours)}. If you did not ask for it, ignore this email: your password stays as it is.`,
  );
}
