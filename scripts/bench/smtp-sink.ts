/**
 * The benchmarks' SMTP server, in its own process: `smtp-server` on 127.0.0.1 that counts what it receives
 * per envelope recipient and per Message-ID (without parsing bodies), and answers `GET /stats` on a small
 * HTTP port. Prints `SMTP <port> HTTP <port>` when ready.
 */
import { createServer } from 'node:http';
import { SMTPServer } from 'smtp-server';

const perRecipient = new Map<string, number>();
const messageIds = new Set<string>();
let messages = 0;

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  maxClients: 100,
  onData(stream, session, callback) {
    let head = '';
    stream.on('data', (chunk: Buffer) => {
      if (head.length < 4096) head += chunk.toString('latin1');
    });
    stream.on('error', () => undefined);
    // Acknowledged as soon as the message is complete; an incomplete one never ends and is not counted.
    stream.on('end', () => {
      messages++;
      for (const r of session.envelope.rcptTo) perRecipient.set(r.address, (perRecipient.get(r.address) ?? 0) + 1);
      const id = /^Message-ID:\s*(\S+)/im.exec(head)?.[1];
      if (id) messageIds.add(id);
      callback();
    });
  },
});
smtp.on('error', () => undefined);

const http = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/reset') {
    perRecipient.clear();
    messageIds.clear();
    messages = 0;
    return res.end('{}');
  }
  let duplicates = 0;
  for (const n of perRecipient.values()) duplicates += n - 1;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ messages, recipients: perRecipient.size, distinctMessageIds: messageIds.size, duplicates }));
});

smtp.listen(0, '127.0.0.1', () => {
  http.listen(0, '127.0.0.1', () => {
    const smtpPort = (smtp.server.address() as { port: number }).port;
    const httpPort = (http.address() as { port: number }).port;
    console.log(`SMTP ${smtpPort} HTTP ${httpPort}`);
  });
});
