import { type AddressInfo, createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../test/harness.js';
import { type SmtpCapture, smtpUrl, startSmtp } from '../../test/smtp.js';
import {
  type AccountEmailLine,
  describeMailer,
  logMailer,
  mailerFrom,
  mailFromProblem,
  resetEmail,
  SMTP_TIMEOUTS,
  smtpMailer,
  smtpUrlProblem,
  verifyEmail,
} from './mailer.js';

const LINK = 'https://api.example.test/account/verify?token=abc123_-XYZ';
const FROM = 'Fund Returns <dashboard@example.test>';
const AUTH = { user: 'mailer', pass: 'p@ss:w/rd secret' };

describe('SMTP mailer against a real SMTP server', () => {
  let smtp: SmtpCapture;
  beforeAll(async () => {
    smtp = await startSmtp({ auth: AUTH, refuse: (a) => a.startsWith('nobody@') });
  });
  afterAll(() => smtp.close());

  it('a verification email arrives with its to, from, subject and the link in text and HTML', async () => {
    const mailer = smtpMailer(smtpUrl(smtp, AUTH), FROM);
    await mailer.send({ to: 'ada@example.com', ...verifyEmail(LINK) });
    const m = await smtp.waitFor(
      (x) => x.to !== undefined && !Array.isArray(x.to) && x.to.text === 'ada@example.com',
    );
    expect(m.from?.value).toEqual([{ name: 'Fund Returns', address: 'dashboard@example.test' }]);
    expect(m.subject).toBe('Confirm your email address for Fund Returns');
    expect(m.text).toContain(LINK);
    expect(m.text).toContain('24 hours');
    expect(m.html).toContain(`href="${LINK}"`);
  });

  it('the user and password in --smtp-url are the ones the server authenticates (percent-escapes decoded)', async () => {
    const before = smtp.logins.length;
    await smtpMailer(smtpUrl(smtp, AUTH), FROM).send({ to: 'bob@example.com', ...resetEmail(LINK) });
    expect(smtp.logins.slice(before)).toEqual(['mailer']);
    const m = await smtp.waitFor((x) => x.subject === 'Reset your Fund Returns password');
    expect(m.text).toContain(LINK);
    expect(m.text).toContain('1 hour.');
  });

  it('a wrong SMTP password rejects with the server named (password hidden) and its reason', async () => {
    const url = smtpUrl(smtp, { user: 'mailer', pass: 'wrong-secret' });
    const err = await smtpMailer(url, FROM)
      .send({ to: 'ada@example.com', ...verifyEmail(LINK) })
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toContain(
      `email to ada@example.com not sent through smtp://mailer:***@127.0.0.1:${smtp.port}`,
    );
    expect(err!.message).toMatch(/535|auth/i);
    expect(err!.message).not.toContain('wrong-secret');
  });

  it('a recipient the server refuses (550 on RCPT) rejects with a message that says so', async () => {
    const err = await smtpMailer(smtpUrl(smtp, AUTH), FROM)
      .send({ to: 'nobody@example.com', ...verifyEmail(LINK) })
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(err?.message).toMatch(
      /^email to nobody@example\.com not sent through smtp:\/\/mailer:\*\*\*@127\.0\.0\.1:\d+: /,
    );
    expect(err?.message).toMatch(/550/);
    expect(err?.message).not.toContain(AUTH.pass);
    expect(smtp.messages.some((m) => m.text?.includes('nobody'))).toBe(false);
  });

  it('a closed port rejects promptly with the connection error', async () => {
    const port = await freePort();
    const started = Date.now();
    const err = await smtpMailer(`smtp://127.0.0.1:${port}`, FROM)
      .send({ to: 'ada@example.com', ...verifyEmail(LINK) })
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(err?.message).toMatch(
      new RegExp(`^email to ada@example.com not sent through smtp://127.0.0.1:${port}: .*ECONNREFUSED`),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a server that accepts the connection but never greets: rejects after the greeting time-out, not never', async () => {
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket)); // holds every socket, says nothing
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as AddressInfo).port;
    try {
      const started = Date.now();
      const err = await smtpMailer(`smtp://127.0.0.1:${port}`, FROM, { greetingTimeout: 300 })
        .send({ to: 'ada@example.com', ...verifyEmail(LINK) })
        .then(
          () => null,
          (e: Error) => e,
        );
      expect(err?.message).toMatch(
        /^email to ada@example\.com not sent through smtp:\/\/127\.0\.0\.1:\d+: .*greeting/i,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(SMTP_TIMEOUTS.greetingTimeout).toBeLessThanOrEqual(10_000);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('an address that is a list or carries a header is refused before any connection', async () => {
    for (const to of [
      'a@example.com, b@example.com',
      'a@example.com\r\nBcc: b@example.com',
      'Ada <a@example.com>',
      'no-at-sign',
    ]) {
      const before = smtp.messages.length;
      await expect(smtpMailer(smtpUrl(smtp, AUTH), FROM).send({ to, ...verifyEmail(LINK) })).rejects.toThrow(
        /not a single email address/,
      );
      expect(smtp.messages.length).toBe(before);
    }
  });
});

describe('SMTPS', () => {
  let tls: SmtpCapture;
  beforeAll(async () => {
    tls = await startSmtp({ tls: true });
  });
  afterAll(() => tls.close());

  it('smtps:// speaks TLS from the first byte and checks the certificate: an untrusted one is refused', async () => {
    const err = await smtpMailer(smtpUrl(tls, undefined, 'smtps'), FROM)
      .send({ to: 'ada@example.com', ...verifyEmail(LINK) })
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(err?.message).toMatch(/self[- ]signed|certificate/i);
    expect(tls.messages).toHaveLength(0);
  });
});

describe('log mailer', () => {
  it('writes exactly one JSON line: msg, to and link, nothing else of the message', async () => {
    const lines: string[] = [];
    const mailer = logMailer((line: AccountEmailLine) => lines.push(JSON.stringify(line)));
    await mailer.send({ to: 'ada@example.com', ...verifyEmail(LINK) });
    expect(lines).toEqual([`{"msg":"account email","to":"ada@example.com","link":"${LINK}"}`]);
  });

  it('through pino, the line is that JSON plus the logger own fields (level, time, service)', async () => {
    const { default: pino } = await import('pino');
    const out: string[] = [];
    const logger = pino({ base: { service: 'fundreturns' } }, { write: (s: string) => out.push(s) });
    await logMailer((line) => logger.info(line)).send({ to: 'ada@example.com', ...resetEmail(LINK) });
    expect(out).toHaveLength(1);
    const parsed = JSON.parse(out[0]) as Record<string, unknown>;
    expect(Object.keys(parsed).sort()).toEqual(['level', 'link', 'msg', 'service', 'time', 'to']);
    expect(parsed).toMatchObject({ msg: 'account email', to: 'ada@example.com', link: LINK, level: 30 });
  });

  it('is what mailerFrom picks without --smtp-url, and the start line says so', async () => {
    const lines: AccountEmailLine[] = [];
    const config = { smtpUrl: null, mailFrom: null };
    await mailerFrom(config, (l) => lines.push(l)).send({ to: 'ada@example.com', ...verifyEmail(LINK) });
    expect(lines).toHaveLength(1);
    expect(describeMailer(config)).toBe('no --smtp-url: account emails are written to the log as JSON lines');
  });
});

describe('mail configuration', () => {
  it('mailerFrom with --smtp-url sends over SMTP, not to the log', async () => {
    const smtp = await startSmtp();
    try {
      const lines: AccountEmailLine[] = [];
      const mailer = mailerFrom({ smtpUrl: smtpUrl(smtp), mailFrom: FROM }, (l) => lines.push(l));
      await mailer.send({ to: 'ada@example.com', ...verifyEmail(LINK) });
      expect(smtp.messages).toHaveLength(1);
      expect(lines).toHaveLength(0);
    } finally {
      await smtp.close();
    }
  });

  it('the start line names the SMTP server with its password hidden', () => {
    const line = describeMailer({ smtpUrl: 'smtps://mailer:s3cret@mail.example.com:465', mailFrom: FROM });
    expect(line).toBe(`account emails go out through smtps://mailer:***@mail.example.com:465 from ${FROM}`);
  });

  it('--smtp-url without --mail-from is refused, saying what is missing', () => {
    expect(() => mailerFrom({ smtpUrl: 'smtp://127.0.0.1:25', mailFrom: null }, () => {})).toThrow(
      '--smtp-url needs --mail-from',
    );
  });

  it('a bad --smtp-url is refused with a sentence that never shows its password', () => {
    expect(smtpUrlProblem('smtp://mailer:pw@mail.example.com:587')).toBeNull();
    expect(smtpUrlProblem('smtps://mail.example.com')).toBeNull();
    expect(smtpUrlProblem('smtp://[::1]:2525')).toBeNull();
    const bad = {
      'mail.example.com': /must be smtp:\/\//,
      'http://mailer:hunter22@mail.example.com': /must start with smtp:\/\/ or smtps:\/\//,
      'smtp://mailer:hunter22@mail.example.com/inbox': /no path, query or fragment/,
      'smtp://mailer:hunter22@mail.example.com?pool=true': /no path, query or fragment/,
      'smtp://:hunter22@mail.example.com': /password but no user/,
      'smtp://mailer:hunter22%ZZ@mail.example.com': /.+/,
    };
    for (const [spec, re] of Object.entries(bad)) {
      const p = smtpUrlProblem(spec);
      expect(p, spec).toMatch(re);
      expect(p, spec).not.toContain('hunter22');
    }
    expect(() => smtpMailer('http://mailer:hunter22@x', FROM)).toThrow(/smtp:\/\//);
  });

  it('--mail-from takes an address or "Name <address>", nothing else', () => {
    expect(mailFromProblem('dashboard@example.com')).toBeNull();
    expect(mailFromProblem('Fund Returns <dashboard@example.com>')).toBeNull();
    for (const bad of ['', 'dashboard', 'a@b.com, c@d.com', 'Name <a@b.com', 'x\r\nBcc: y@z.com <a@b.com>'])
      expect(mailFromProblem(bad), bad).toMatch(/--mail-from must be/);
  });
});

describe('account email texts', () => {
  it('the link is escaped in the HTML and verbatim in the text', () => {
    const link = 'https://x.example/account/reset?token=a&b="c"<d>';
    const e = resetEmail(link);
    expect(e.text).toContain(link);
    expect(e.link).toBe(link);
    expect(e.html).toContain('href="https://x.example/account/reset?token=a&amp;b=&quot;c&quot;&lt;d&gt;"');
    expect(e.html).not.toContain('"c"');
    expect(e.html).not.toContain('<d>');
  });

  it('only an http(s) link can be sent', () => {
    expect(() => verifyEmail('javascript:alert(1)')).toThrow(/not an http\(s\) link/);
    expect(() => verifyEmail('not a url')).toThrow();
  });

  it('the validity said in the text follows the given hours', () => {
    expect(verifyEmail(LINK, 48).text).toContain('for 48 hours');
    expect(resetEmail(LINK, 2).text).toContain('for 2 hours');
  });
});
