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
  /** Waits until every message received so far is parsed into `received`. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestSmtp(options: { parse?: boolean } = {}): Promise<TestSmtp> {
  const parse = options.parse ?? true;
  const received: ReceivedMail[] = [];
  const refusals = new Map<string, number>();
  const counts = new Map<string, number>();
  const parsing = new Set<Promise<void>>();
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
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => parse && chunks.push(chunk));
      stream.on('error', () => undefined);
      // Acknowledged as soon as the message is complete, before any parsing (RFC 1047: a late 250 invites
      // duplicates); a message whose client vanished before the final dot never ends and is not counted.
      stream.on('end', () => {
        for (const to of envelopeTo) counts.set(to, (counts.get(to) ?? 0) + 1);
        callback();
        if (!parse) return;
        const parsed = simpleParser(Buffer.concat(chunks)).then((mail) => {
          const headers: Record<string, string> = {};
          for (const line of mail.headerLines) headers[line.key] = line.line.slice(line.line.indexOf(':') + 1).trim();
          received.push({
            envelopeTo,
            messageId: mail.messageId,
            subject: mail.subject,
            text: mail.text ?? '',
            html: typeof mail.html === 'string' ? mail.html : '',
            headers,
          });
        });
        parsing.add(parsed);
        void parsed.finally(() => parsing.delete(parsed));
      });
    },
  });
  // A client killed mid-session resets its connection: expected here, not a failure of the server.
  server.on('error', () => undefined);
  const port = await new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.server.address() as { port: number }).port));
  });
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    received,
    refusals,
    counts,
    async settled() {
      while (parsing.size > 0) await Promise.all([...parsing]);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
