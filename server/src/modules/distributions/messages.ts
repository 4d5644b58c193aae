/**
 * The e-mail of a distribution: a plain-text and an HTML part with the personal link, and the RFC 2369 /
 * RFC 8058 headers that give mail clients a one-click unsubscribe button. The Message-ID is derived from the
 * distribution and the recipient, so a message re-sent after a crash carries the same id as the first
 * attempt and receiving systems can recognise the duplicate.
 */
import { createHash } from 'node:crypto';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { escapeHtml, wordsFor } from './interface-words.js';

export { escapeHtml };

export interface MessageInput {
  from: string;
  to: string;
  firstName: string | null;
  subject: string;
  message: string | null;
  surveyTitle: string;
  answerUrl: string;
  unsubscribeUrl: string;
  expiresAt: Date;
  distributionId: string;
  externalId: string;
  reminder: boolean;
  /** Host part of Message-IDs. */
  domain: string;
  /** The language the message is in (BCP 47): the survey's strings and the service's words around them. */
  language?: string;
}

export function messageIdOf(distributionId: string, externalId: string, reminder: boolean, domain: string): string {
  const who = createHash('sha256').update(externalId).digest('hex').slice(0, 24);
  return `<${distributionId}.${who}${reminder ? '.reminder' : ''}@${domain}>`;
}

export function buildMessage(input: MessageInput): Mail.Options {
  const language = input.language ?? 'en';
  const w = wordsFor(language);
  const greeting = input.firstName ? w.text('greetingName', { name: input.firstName }) : w.text('greeting');
  const lead = input.reminder
    ? w.text('reminderLead', { title: input.surveyTitle })
    : (input.message ?? w.text('invitation', { title: input.surveyTitle }));
  // The last day the link works, written out in the language (UTC, as the expiry is kept).
  const personal = w.text('personalLink', { date: w.date(input.expiresAt) });
  const text = [
    greeting,
    '',
    lead,
    '',
    w.text('answerHere', { url: input.answerUrl }),
    '',
    personal,
    '',
    w.text('unsubscribeLine', { url: input.unsubscribeUrl }),
  ].join('\n');
  const html = `<!doctype html>
<html lang="${escapeHtml(language)}" dir="${w.dir}"><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1a1a1a">
<p>${escapeHtml(greeting)}</p>
<p>${escapeHtml(lead).replace(/\n/g, '<br>')}</p>
<p><a href="${escapeHtml(input.answerUrl)}" style="display:inline-block;padding:12px 20px;background:#1f4fd1;color:#fff;text-decoration:none;border-radius:6px">${escapeHtml(w.text('answerButton'))}</a></p>
<p style="font-size:14px;color:#555">${escapeHtml(personal)}</p>
<p style="font-size:13px;color:#555"><a href="${escapeHtml(input.unsubscribeUrl)}">${escapeHtml(w.text('unsubscribeLink'))}</a></p>
</body></html>`;
  return {
    from: input.from,
    to: input.to,
    subject: input.reminder ? w.text('reminderSubject', { subject: input.subject }) : input.subject,
    text,
    html,
    messageId: messageIdOf(input.distributionId, input.externalId, input.reminder, input.domain),
    headers: {
      'List-Unsubscribe': `<${input.unsubscribeUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'Auto-Submitted': 'auto-generated',
    },
  };
}
