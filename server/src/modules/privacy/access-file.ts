/**
 * The file an access request produces (`PrivacyRequestAccessFile`): the person's data from their holdings, and
 * nothing about anyone else. Responses carry the questions' texts of the version they answered (a launched
 * survey's wording may have changed since), choice answers their labels. Links and kiosk codes are credentials
 * and stay out; so does everything of other people (their answers in the same surveys, other recipients).
 */
import type { PrivacyRequestAccessFile as AccessFile } from '../../generated/openapi.js';
import { iso } from '../../lib/time.js';
import { toProfile, toRespondent } from '../respondents/index.js';
import { privacyOf, type Holdings } from './holdings.js';
import type { QuestionInfo } from './repository.js';

export type { AccessFile };

type FileAnswer = AccessFile['responses'][number]['answers'][number];

/** The words a response was asked in: the version it answered, else (before versions) the survey as it is. */
export interface AskedIn {
  title: string;
  questions: QuestionInfo[];
}

function labelsOf(question: QuestionInfo, value: unknown): string[] | undefined {
  if (!Array.isArray(question.choices)) return undefined;
  const labels = new Map(question.choices.map((c) => [c.id, c.label]));
  const ids = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  const named = ids.filter((id): id is string => typeof id === 'string' && labels.has(id));
  return named.length > 0 ? named.map((id) => labels.get(id)!) : undefined;
}

export function accessFileOf(
  requestId: string,
  generatedAt: Date,
  h: Holdings,
  askedIn: (surveyId: string, version: number) => AskedIn,
): AccessFile {
  const titleOf = (surveyId: string) => h.surveys.get(surveyId)?.title ?? '';
  return {
    requestId,
    generatedAt: iso(generatedAt),
    respondents: h.respondents.map((r) => toRespondent(r)),
    scimUsers: h.scimUsers.map((u) => ({
      id: u.id,
      externalId: u.external_id,
      userName: u.user_name,
      active: u.active,
      emails: u.emails,
      employeeNumber: u.employee_number,
      preferredLanguage: u.preferred_language,
      createdAt: iso(u.created_at),
      updatedAt: iso(u.updated_at),
    })),
    responses: h.responses.map((r) => {
      const version = r.survey_version ?? 1;
      const asked = askedIn(r.survey_id, version);
      const questions = new Map(asked.questions.map((q) => [q.id, q]));
      const byQuestion = new Map(r.answers.map((a) => [a.questionId, a]));
      // In the survey's order, as the answers are stored; an answer to a question the version lacks (none should) last.
      const ordered = [
        ...asked.questions.filter((q) => byQuestion.has(q.id)).map((q) => byQuestion.get(q.id)!),
        ...r.answers.filter((a) => !questions.has(a.questionId)),
      ];
      const answers: FileAnswer[] = ordered.map((a) => {
        const question = questions.get(a.questionId);
        const answer: FileAnswer = {
          questionId: a.questionId,
          questionText: question?.text ?? '',
          type: question?.type ?? 'unknown',
          value: a.value,
        };
        if (typeof a.other === 'string') answer.other = a.other;
        const labels = question ? labelsOf(question, a.value) : undefined;
        if (labels) answer.labels = labels;
        return answer;
      });
      return {
        responseId: r.id,
        surveyId: r.survey_id,
        surveyTitle: asked.title,
        privacy: privacyOf(h.surveys.get(r.survey_id)!),
        submittedAt: iso(r.submitted_at),
        surveyVersion: version,
        language: r.language,
        distributionId: r.distribution_id,
        answers,
      };
    }),
    notIdentifiable: h.notIdentifiable.map((n) => ({
      surveyId: n.surveyId,
      surveyTitle: titleOf(n.surveyId),
      responses: n.responses,
    })),
    distributions: h.recipients.map((r) => ({
      distributionId: r.distribution_id,
      surveyId: r.survey_id,
      method: r.method,
      status: r.status,
      sentAt: iso(r.sent_at),
      respondedAt: iso(r.responded_at),
      reminderSentAt: iso(r.reminder_sent_at),
      personalLink: true,
      kioskCode: r.kiosk_code,
      snapshot: { email: r.email, ...toProfile(r), language: r.language },
    })),
    unsubscribes: h.unsubscribes.map((u) => ({ email: u.email_lower, createdAt: iso(u.created_at) })),
    webhookRecipients: h.webhookRecipients,
  };
}
