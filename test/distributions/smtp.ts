/**
 * A real SMTP server on 127.0.0.1 (`smtp-server`) that keeps what it receives, parsed with `mailparser`.
 * Addresses with `bounce` in them are refused for good (550), with `defer` for now (451).
 */
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  envelopeTo: string[];
  messageId: string | undefined;
  subject: string | undefined;
  text: string;
  html: string;
  headers: Record<string, string>;
}

export interface TestSmtp {
  url: string;
  port: number;
  received: ReceivedMail[];
  /** RCPT refusals seen, by address. */
  refusals: Map<string, number>;
  /** Only counts envelopes, without parsing (fast, for large sends). */
  counts: Map<string, number>;
  close(): Promise<void>;
}

export async function startTestSmtp(options: { parse?: boolean } = {}): Promise<TestSmtp> {
  const parse = options.parse ?? true;
  const received: ReceivedMail[] = [];
  const refusals = new Map<string, number>();
  const counts = new Map<string, number>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    maxClients: 50,
    onRcptTo(address, _session, callback) {
      const to = address.address.toLowerCase();
      const refuse = (code: number, text: string) => {
        refusals.set(to, (refusals.get(to) ?? 0) + 1);
        callback(Object.assign(new Error(text), { responseCode: code }));
      };
      if (to.includes('bounce')) return refuse(550, '5.1.1 No such user');
      if (to.includes('defer')) return refuse(451, '4.3.0 Try again later');
      callback();
    },
    onData(stream, session, callback) {
      const envelopeTo = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
      if (!parse) {
        stream.on('data', () => undefined);
        stream.on('end', () => {
          for (const to of envelopeTo) counts.set(to, (counts.get(to) ?? 0) + 1);
          callback();
        });
        return;
      }
      simpleParser(stream)
        .then((mail) => {
          const headers: Record<string, string> = {};
          for (const line of mail.headerLines) headers[line.key] = line.line.slice(line.line.indexOf(':') + 1).trim();
          for (const to of envelopeTo) counts.set(to, (counts.get(to) ?? 0) + 1);
          received.push({ envelopeTo, messageId: mail.messageId, subject: mail.subject, text: mail.text ?? '', html: typeof mail.html === 'string' ? mail.html : '', headers });
          callback();
        })
        .catch(callback);
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.server.address() as { port: number }).port));
  });
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    received,
    refusals,
    counts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
