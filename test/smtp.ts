/**
 * A real SMTP server inside the test process (the `smtp-server` package) that keeps
 * every message it accepts, parsed (`mailparser`): what the dashboard's emails are
 * tested against, end to end over a socket. Loopback only, a free port, no TLS
 * (STARTTLS is not offered, so a client does not try to upgrade to the package's
 * published test certificate), AUTH allowed in clear text on loopback.
 *
 * No child process: close() in the file's afterAll (or afterEach) ends it.
 */
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface SmtpOptions {
  /** Accept only this user and password (AUTH PLAIN or LOGIN); without it, no AUTH. */
  auth?: { user: string; pass: string };
  /** Refuse these recipients with `550 5.1.1 mailbox unavailable`. */
  refuse?: (address: string) => boolean;
  /** Serve SMTPS (TLS from the first byte) with smtp-server's own self-signed test certificate. */
  tls?: boolean;
}

export interface SmtpCapture {
  port: number;
  /** Every message accepted, in order of arrival. */
  messages: ParsedMail[];
  /** Every user name a client authenticated as (or tried to). */
  logins: string[];
  /** The first message `pred` accepts, now or when it arrives; rejects after `timeoutMs`. */
  waitFor(pred: (m: ParsedMail) => boolean, timeoutMs?: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

/** The SMTP URL a mailer reaches this server with. */
export function smtpUrl(
  capture: SmtpCapture,
  auth?: { user: string; pass: string },
  scheme = 'smtp',
): string {
  const cred = auth === undefined ? '' : `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@`;
  return `${scheme}://${cred}127.0.0.1:${capture.port}`;
}

export async function startSmtp(options: SmtpOptions = {}): Promise<SmtpCapture> {
  const messages: ParsedMail[] = [];
  const logins: string[] = [];
  const waiters = new Set<{ pred: (m: ParsedMail) => boolean; resolve: (m: ParsedMail) => void }>();
  const config: SMTPServerOptions = {
    secure: options.tls === true,
    disabledCommands: options.tls === true ? [] : ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: options.auth === undefined,
    disableReverseLookup: true,
    logger: false,
    socketTimeout: 10_000,
    closeTimeout: 1_000,
    onAuth(auth, _session, callback) {
      logins.push(auth.username ?? '');
      if (
        options.auth !== undefined &&
        auth.username === options.auth.user &&
        auth.password === options.auth.pass
      )
        return callback(null, { user: auth.username });
      const err = new Error('5.7.8 authentication failed') as Error & { responseCode: number };
      err.responseCode = 535;
      callback(err);
    },
    onRcptTo(address, _session, callback) {
      if (options.refuse?.(address.address)) {
        const err = new Error('mailbox unavailable') as Error & { responseCode: number };
        err.responseCode = 550;
        return callback(err);
      }
      callback();
    },
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          messages.push(mail);
          for (const w of waiters)
            if (w.pred(mail)) {
              waiters.delete(w);
              w.resolve(mail);
            }
          callback();
        })
        .catch((e: Error) => callback(e));
    },
  };
  if (options.auth === undefined) config.disabledCommands = [...(config.disabledCommands ?? []), 'AUTH'];
  const server = new SMTPServer(config);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // A client's broken connection is the test's to see, not a crash of the runner.
  server.on('error', () => {});
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    messages,
    logins,
    waitFor(pred, timeoutMs = 15_000) {
      const found = messages.find(pred);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise<ParsedMail>((resolve, reject) => {
        const w = {
          pred,
          resolve: (m: ParsedMail) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(
            new Error(
              `no such email within ${timeoutMs} ms; received ${messages.length}: ${messages.map((m) => `${JSON.stringify(m.subject)} to ${m.to === undefined ? '?' : JSON.stringify((Array.isArray(m.to) ? m.to : [m.to]).map((a) => a.text))}`).join(', ') || 'none'}`,
            ),
          );
        }, timeoutMs);
        waiters.add(w);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
