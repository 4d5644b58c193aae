/**
 * The e-mail of a distribution: a plain-text and an HTML part with the personal link, and the RFC 2369 /
 * RFC 8058 headers that give mail clients a one-click unsubscribe button. The Message-ID is derived from the
 * distribution and the recipient, so a message re-sent after a crash carries the same id as the first
 * attempt and receiving systems can recognise the duplicate.
 */
import { createHash } from 'node:crypto';
import type Mail from 'nodemailer/lib/mailer/index.js';

export const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

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
}

export function messageIdOf(distributionId: string, externalId: string, reminder: boolean, domain: string): string {
  const who = createHash('sha256').update(externalId).digest('hex').slice(0, 24);
  return `<${distributionId}.${who}${reminder ? '.reminder' : ''}@${domain}>`;
}

export function buildMessage(input: MessageInput): Mail.Options {
  const greeting = input.firstName ? `Hello ${input.firstName},` : 'Hello,';
  const lead = input.reminder
    ? `A reminder: we would still love to hear from you in "${input.surveyTitle}".`
    : (input.message ?? `You are invited to answer "${input.surveyTitle}".`);
  const until = input.expiresAt.toISOString().slice(0, 10);
  const text = [
    greeting,
    '',
    lead,
    '',
    `Answer here: ${input.answerUrl}`,
    '',
    `This link is personal: please do not forward it. It works until ${until} and accepts one answer.`,
    '',
    `Stop receiving these e-mails: ${input.unsubscribeUrl}`,
  ].join('\n');
  const html = `<!doctype html>
<html lang="en"><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1a1a1a">
<p>${escapeHtml(greeting)}</p>
<p>${escapeHtml(lead).replace(/\n/g, '<br>')}</p>
<p><a href="${escapeHtml(input.answerUrl)}" style="display:inline-block;padding:12px 20px;background:#1f4fd1;color:#fff;text-decoration:none;border-radius:6px">Answer the survey</a></p>
<p style="font-size:14px;color:#555">This link is personal: please do not forward it. It works until ${until} and accepts one answer.</p>
<p style="font-size:13px;color:#555"><a href="${escapeHtml(input.unsubscribeUrl)}">Unsubscribe</a> from these e-mails.</p>
</body></html>`;
  return {
    from: input.from,
    to: input.to,
    subject: input.reminder ? `Reminder: ${input.subject}` : input.subject,
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
