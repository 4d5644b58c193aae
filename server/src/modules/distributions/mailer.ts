/**
 * Sending distribution e-mail. With SMTP_URL: nodemailer's pooled SMTP transport (a few long-lived
 * connections, its own rate limit of MAIL_RATE_PER_SECOND). Without: each message is written as an `.eml`
 * file into the outbox folder (MAIL_OUTBOX_DIR), so `npm start` works with no mail server and a developer
 * can open the messages in any mail client. The sender classifies each outcome the way the recipient rows
 * record it: accepted, refused for good (5xx: `bounced`) or refused for now (4xx, connection: retried).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { Config } from '../../config.js';

export type SendOutcome =
  | { kind: 'sent'; response: string }
  | { kind: 'bounced'; error: string }
  | { kind: 'deferred'; error: string; connection: boolean };

export interface MailSender {
  /** What the mail server said about one message (never throws). */
  send(message: Mail.Options): Promise<SendOutcome>;
  close(): void;
  /** `smtp` or `outbox`, for logs. */
  kind: 'smtp' | 'outbox';
}

/** How many messages one sending job hands to the transport at once (its connections). */
export const SMTP_CONNECTIONS = 8;

interface SmtpError {
  message?: string;
  responseCode?: number;
  response?: string;
  code?: string;
}

export function outcomeOf(error: unknown): SendOutcome {
  const e = error as SmtpError;
  const text = (e.response ?? e.message ?? String(error)).slice(0, 1000);
  if (typeof e.responseCode === 'number' && e.responseCode >= 500)
    return { kind: 'bounced', error: `The mail server refused the message: ${text}` };
  if (typeof e.responseCode === 'number' && e.responseCode >= 400)
    return { kind: 'deferred', error: `The mail server deferred the message: ${text}`, connection: false };
  return { kind: 'deferred', error: `The mail server could not be reached: ${text}`, connection: true };
}

export function createMailSender(config: Pick<Config, 'smtpUrl' | 'mailRatePerSecond' | 'mailOutboxDir'>): MailSender {
  if (config.smtpUrl) {
    const transport = nodemailer.createTransport({
      url: config.smtpUrl,
      pool: true,
      maxConnections: SMTP_CONNECTIONS,
      maxMessages: Infinity,
      ...(config.mailRatePerSecond > 0 ? { rateDelta: 1000, rateLimit: config.mailRatePerSecond } : {}),
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    } as never);
    return {
      kind: 'smtp',
      async send(message) {
        try {
          const info = await transport.sendMail(message);
          if (info.rejected.length > 0)
            return {
              kind: 'bounced',
              error: `The mail server refused the address: ${String(info.response).slice(0, 900)}`,
            };
          return { kind: 'sent', response: String(info.response) };
        } catch (error) {
          return outcomeOf(error);
        }
      },
      close: () => transport.close(),
    };
  }
  const stream = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  let ready: Promise<unknown> | undefined;
  return {
    kind: 'outbox',
    async send(message) {
      try {
        ready ??= mkdir(config.mailOutboxDir, { recursive: true });
        await ready;
        const info = await stream.sendMail(message);
        const id = String(info.messageId).replace(/[^A-Za-z0-9._-]/g, '');
        await writeFile(
          path.join(config.mailOutboxDir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${id}.eml`),
          info.message as Buffer,
        );
        return { kind: 'sent', response: 'written to the outbox' };
      } catch (error) {
        return {
          kind: 'deferred',
          error: `Could not write to the outbox: ${(error as Error).message}`,
          connection: true,
        };
      }
    },
    close: () => stream.close(),
  };
}
