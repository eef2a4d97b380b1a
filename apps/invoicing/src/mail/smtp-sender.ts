import { createTransport, type Transporter } from 'nodemailer';

/** A mail ready to leave: addresses, words and the PDF. */
export interface OutgoingMail {
  /** The Message-ID header, fixed when the mail was queued: a repeat after a crash can be told apart by receivers. */
  messageId: string;
  to: string;
  subject: string;
  text: string;
  attachments: { filename: string; content: Uint8Array; contentType: string }[];
}

/** How an attempt ended: accepted by the server, refused for good (retrying cannot help), or failed for now. */
export type SendResult = { ok: true } | { ok: false; permanent: boolean; error: string };

/**
 * Sends invoice e-mails through a real SMTP conversation (nodemailer). One pooled connection
 * set per process. Timeouts are short so a stuck server fails an attempt instead of holding
 * its lease: the attempt is retried on the mail's schedule.
 */
export class SmtpSender {
  private readonly transporter: Transporter;

  constructor(smtpUrl: string, private readonly from: string) {
    this.transporter = createTransport({
      url: smtpUrl,
      pool: true,
      maxConnections: 4,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
  }

  async send(mail: OutgoingMail): Promise<SendResult> {
    try {
      await this.transporter.sendMail({
        from: this.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        messageId: mail.messageId,
        attachments: mail.attachments.map(({ filename, content, contentType }) => ({ filename, content: Buffer.from(content), contentType })),
      });
      return { ok: true };
    } catch (error) {
      const failure = error as Error & { responseCode?: number; code?: string; command?: string };
      // A 5xx answer to the recipient is the recipient's problem and will not change by retrying;
      // anything else (connection refused, 4xx, authentication, a 5xx from a broken relay) is
      // retried, so a failing server delays mail and never loses it.
      const permanent = failure.command === 'RCPT TO' && failure.responseCode !== undefined && failure.responseCode >= 500;
      return { ok: false, permanent, error: `${failure.responseCode ?? failure.code ?? 'error'}: ${failure.message}`.slice(0, 500) };
    }
  }

  close(): void {
    this.transporter.close();
  }
}
