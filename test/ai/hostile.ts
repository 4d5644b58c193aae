/**
 * One hostile set of answers for the redaction tests, run through every provider: e-mail addresses, phone numbers
 * in international and national spellings, names of this organization's respondents (capitalised, lower case,
 * possessive, accented, and names that are also English words), next to text that must survive untouched:
 * figures, dates, times, a name that merely starts like a respondent's ("Priyanka", also a respondent of the
 * other environment), lower-case "will" and "bell", and the name of another organization's respondent.
 *
 * Four topics of three comments each, so that with an anonymity threshold of 3 every comment is quoted whole and
 * the quotes can be compared with the expected redactions exactly.
 */
import type { TestService } from '../helpers/service.js';

type Client = ReturnType<TestService['client']>;

/** Respondents of the analysed organization and environment (LIVE). */
export const ourRespondents = [
  { externalId: 'EMP-PRIYA', email: 'priya.r@corp.example', firstName: 'Priya', lastName: 'Raghunathan' },
  { externalId: 'EMP-WILL', email: 'will.bell@corp.example', firstName: 'Will', lastName: 'Bell' },
  { externalId: 'EMP-LUKASZ', email: 'lukasz.w@corp.example', firstName: 'Łukasz', lastName: 'Wiśniewski' },
];
/** A respondent of the same organization's TEST environment: not redacted in a LIVE analysis. */
export const otherEnvironmentRespondent = {
  externalId: 'EMP-PRIYANKA',
  email: 'priyanka@corp.example',
  firstName: 'Priyanka',
  lastName: 'Shah',
};
/** A respondent of another organization: not redacted here. */
export const otherOrganizationRespondent = {
  externalId: 'EXT-1',
  email: 'thorsten@elsewhere.example',
  firstName: 'Thorsten',
  lastName: 'Kowalczyk',
};

/** [answer as written, answer as it may leave the service]. */
export const hostileAnswers: Array<[string, string]> = [
  // Meetings
  [
    'Too many meetings this week; Priya Raghunathan booked four of them. Reach me at sam.tester@corp.example or +44 20 7946 0958.',
    'Too many meetings this week; [name] [name] booked four of them. Reach me at [email] or [phone].',
  ],
  [
    'Meetings overrun every day, ask priya or Will Bell (+1 (555) 123-4567). I will ring the bell at 9:30 if the meeting runs late.',
    'Meetings overrun every day, ask [name] or [name] [name] ([phone]). I will ring the bell at 9:30 if the meeting runs late.',
  ],
  [
    'The Monday meeting with Łukasz Wiśniewski could be an email to PRIYA.R+FEEDBACK@Corp-Mail.Example.com; call (020) 7946-0958.',
    'The Monday meeting with [name] [name] could be an email to [email]; call [phone].',
  ],
  // Pay
  [
    "My salary is 20% below the market and the raise was tiny; Raghunathan's group got a bonus. Text 555.123.4567.",
    'My salary is 20% below the market and the raise was tiny; [name] group got a bonus. Text [phone].',
  ],
  [
    'Pay has not changed since 2019-2021 and the bonus of 2.5 % came on 2024-03-15. Thorsten Kowalczyk agrees. Phone 0049 30 12345678.',
    'Pay has not changed since 2019-2021 and the bonus of 2.5 % came on 2024-03-15. Thorsten Kowalczyk agrees. Phone [phone].',
  ],
  [
    'Compensation is unfair, Priyanka and I are underpaid; my number is +33 6 12 34 56 78 or 07700 900123.',
    'Compensation is unfair, Priyanka and I are underpaid; my number is [phone] or [phone].',
  ],
  // Tools
  [
    'My laptop is slow and the VPN drops; write to łukasz.wiśniewski@firma.example.pl or ring +49 (0)30 1234 5678.',
    'My laptop is slow and the VPN drops; write to [email] or ring [phone].',
  ],
  [
    'The software crashes daily and version 2.0 is worse. Contact priya raghunathan at +1-555-123-4567.',
    'The software crashes daily and version 2.0 is worse. Contact [name] [name] at [phone].',
  ],
  [
    'Jira and the printer are broken for the top 10 users; Will knows, reach him on 555 123 4567.',
    'Jira and the printer are broken for the top 10 users; [name] knows, reach him on [phone].',
  ],
  // Office
  [
    'The parking is always full and the kitchen is dirty. Ask Thorsten Kowalczyk, or mail facilities@corp.example.',
    'The parking is always full and the kitchen is dirty. Ask Thorsten Kowalczyk, or mail [email].',
  ],
  [
    "Noisy desks near the coffee machine; Bell's desk is worst. Q3 2024 was better. WhatsApp +44 7700 900 123.",
    'Noisy desks near the coffee machine; [name] desk is worst. Q3 2024 was better. WhatsApp [phone].',
  ],
  [
    'The office chairs hurt my back; Priya’s chair broke on 12 May. Dial 030/1234567.',
    'The office chairs hurt my back; [name] chair broke on 12 May. Dial [phone].',
  ],
];

export const written = hostileAnswers.map(([answer]) => answer);
export const redacted = hostileAnswers.map(([, safe]) => safe);

/** Which topic each answer is about, as a remote model would group them. */
export const topics: Array<{ name: string; word: RegExp }> = [
  { name: 'meetings', word: /meeting/i },
  { name: 'pay', word: /salary|pay |compensation/i },
  { name: 'tools', word: /laptop|software|jira/i },
  { name: 'office', word: /parking|desks|office/i },
];

/**
 * What must never appear in anything the service hands out or sends: every e-mail address, phone number and name
 * of this organization's respondents above, in any spelling used.
 */
export const secrets: RegExp[] = [
  /[\w.+-]+@[\w-]+\.[a-z]/i,
  /sam\.tester/i,
  /\bpriya\b/i,
  /raghunathan/i,
  /łukasz/i,
  /wiśniewsk/i,
  /\bWill\b/,
  /\bBell\b/,
  /corp-mail|firma\.example|corp\.example/i,
  /7946/,
  /555/,
  /12345678|1234567|1234 5678/,
  /900 ?123/,
  /12 34 56 78/,
];

/** The secrets found in a text (empty when it is clean). */
export function leaks(text: string): string[] {
  return secrets.filter((secret) => secret.test(text)).map(String);
}

/** A focus that names a respondent: echoed in the offline summary, and sent to a remote model. */
export const hostileFocus = 'Meetings, as Priya Raghunathan (priya.r@corp.example) asked';

/** Creates the respondents: ours in LIVE, one in TEST, and one in another organization. */
export async function createRespondents(ours: { live: Client; test: Client }, other: { live: Client }): Promise<void> {
  const put = (client: Client, { externalId, ...body }: typeof otherOrganizationRespondent) =>
    client.unwrap(client.PUT('/api/v1/respondents/{externalId}', { params: { path: { externalId } }, body }));
  for (const respondent of ourRespondents) await put(ours.live, respondent);
  await put(ours.test, otherEnvironmentRespondent);
  await put(other.live, otherOrganizationRespondent);
}
