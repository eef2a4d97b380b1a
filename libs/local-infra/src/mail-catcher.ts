import { mkdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface MailCatcherOptions {
  /** TCP port on `host`; a free one is picked when omitted. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** When set, each message is also written there as `<time>-<n>.eml` (opens in any mail client). */
  dir?: string;
  /** Called with each message once it is kept (and written). */
  onMessage?: (mail: CaughtMail) => void;
}

/** One message as the catcher received it: the SMTP envelope, the raw bytes and their parse. */
export interface CaughtMail {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  parsed: ParsedMail;
  /** The .eml file, when the catcher writes to a folder. */
  file?: string;
}

export interface MailCatcher {
  /** The SMTP URL to send to, e.g. `smtp://127.0.0.1:2525`. */
  url: string;
  port: number;
  /** Every message received so far, oldest first. */
  messages(): CaughtMail[];
  /**
   * Simulates an outage: while set, every recipient is refused with this SMTP reply code (a 4xx
   * asks the sender to try again later, a 5xx refuses for good); null accepts again. Resolves to
   * the number of refusals since the last call.
   */
  refuse(code: number | null): number;
  stop(): Promise<void>;
}

/**
 * A real SMTP server (smtp-server) that keeps what it receives, parsed with mailparser: the mail
 * catcher of `npm start` and of the tests. Plain SMTP without authentication or TLS, for
 * loopback use only.
 */
export async function startMailCatcher(options: MailCatcherOptions = {}): Promise<MailCatcher> {
  const caught: CaughtMail[] = [];
  /** Numbers the messages as they arrive, so two written in the same millisecond keep apart. */
  let received = 0;
  let refusal: number | null = null;
  let refusals = 0;
  if (options.dir) await mkdir(options.dir, { recursive: true });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    size: 25 * 1024 * 1024,
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (refusal === null) return callback();
      refusals += 1;
      callback(Object.assign(new Error(`Refused by the mail catcher (${refusal})`), { responseCode: refusal }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        const number = ++received;
        const raw = Buffer.concat(chunks);
        simpleParser(raw)
          .then(async (parsed) => {
            const mail: CaughtMail = {
              envelope: { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((rcpt) => rcpt.address) },
              raw,
              parsed,
            };
            if (options.dir) {
              mail.file = path.join(options.dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${number}.eml`);
              await writeFile(mail.file, raw);
            }
            caught.push(mail);
            options.onMessage?.(mail);
            callback();
          })
          .catch(callback);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  // A client that misbehaves must not take the catcher down.
  server.on('error', () => undefined);
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    messages: () => [...caught],
    refuse(code) {
      refusal = code;
      const counted = refusals;
      refusals = 0;
      return counted;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
