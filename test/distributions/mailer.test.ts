/** The mail sender without a database: the outbox folder when SMTP_URL is unset, and how refusals are classified. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMailSender, outcomeOf } from '../../server/src/modules/distributions/mailer.js';
import { buildMessage } from '../../server/src/modules/distributions/messages.js';

const input = {
  from: 'Survey Service <surveys@localhost>',
  to: 'a@example.com',
  firstName: 'Ada <script>',
  subject: 'Pulse',
  message: 'Tell us & be honest.',
  surveyTitle: 'Pulse',
  answerUrl: 'http://127.0.0.1:3000/s/TOKEN',
  unsubscribeUrl: 'http://127.0.0.1:3000/u/TOKEN',
  expiresAt: new Date('2027-01-22T08:00:00Z'),
  distributionId: 'dst_01JD3MF1P6R2T8XK4W9Z3C5V7N',
  externalId: 'E-1',
  reminder: false,
  domain: 'surveys.example.com',
};
const message = (to: string) => buildMessage({ ...input, to });

describe('mail sender', () => {
  it('writes one .eml file per message to the outbox when no SMTP server is configured', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'outbox-'));
    const sender = createMailSender({
      smtpUrl: undefined,
      mailRatePerSecond: 0,
      mailOutboxDir: path.join(dir, 'outbox'),
    });
    expect(sender.kind).toBe('outbox');
    expect(await sender.send(message('a@example.com'))).toMatchObject({ kind: 'sent' });
    expect(await sender.send(message('b@example.com'))).toMatchObject({ kind: 'sent' });
    sender.close();
    const files = readdirSync(path.join(dir, 'outbox')).sort();
    const emls = files.map((f) => readFileSync(path.join(dir, 'outbox', f), 'utf8'));
    rmSync(dir, { recursive: true, force: true });
    expect(files).toHaveLength(2);
    const eml = emls[0]!;
    expect(eml).toMatch(/^List-Unsubscribe: <http:\/\/127\.0\.0\.1:3000\/u\/TOKEN>$/m);
    expect(eml).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    expect(eml).toMatch(/^Message-ID:\s*<dst_01JD3MF1P6R2T8XK4W9Z3C5V7N\.[0-9a-f]{24}@surveys\.example\.com>$/m);
    expect(eml).toContain('Content-Type: text/plain');
    expect(eml).toContain('Content-Type: text/html');
    // The HTML part escapes what came from data.
    expect(eml).toContain('Ada &lt;script&gt;');
  });

  it('the same recipient always gets the same Message-ID; a reminder another one', () => {
    expect(message('a@example.com').messageId).toBe(message('a@example.com').messageId);
    const reminder = buildMessage({ ...input, reminder: true });
    expect(reminder.messageId).not.toBe(message('a@example.com').messageId);
    expect(reminder.subject).toBe('Reminder: Pulse');
  });

  it("says the service's own words in the recipient's language, the last day written out in it", () => {
    const german = buildMessage({ ...input, message: null, reminder: true, language: 'de-AT' });
    expect(german.subject).toBe('Erinnerung: Pulse');
    expect(german.text).toContain('Eine Erinnerung: Wir würden uns weiterhin über Ihre Teilnahme an „Pulse“ freuen.');
    expect(german.text).toContain('Er gilt bis zum 22. Jänner 2027 und nimmt eine Antwort an.');
    expect(german.html).toContain('<html lang="de-AT" dir="ltr">');
    const english = buildMessage({ ...input, message: null });
    expect(english.text).toContain('You are invited to answer "Pulse".');
    expect(english.text).toContain('It works until January 22, 2027 and accepts one answer.');
  });

  it('classifies refusals: 5xx bounced, 4xx deferred, no answer unreachable', () => {
    expect(outcomeOf({ responseCode: 550, response: '550 5.1.1 No such user' })).toMatchObject({ kind: 'bounced' });
    expect(outcomeOf({ responseCode: 451, response: '451 4.3.0 Try later' })).toMatchObject({
      kind: 'deferred',
      connection: false,
    });
    expect(outcomeOf({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:1' })).toMatchObject({
      kind: 'deferred',
      connection: true,
    });
  });
});
