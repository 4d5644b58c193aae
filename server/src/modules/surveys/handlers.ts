/** Survey and response operations: thin adapters from the contract to the service. */
import { notFound, validationFailed } from '../../http/errors.js';
import { tenantOf, type Handler } from '../../http/handler.js';
import { pageRequest, paginationOf } from '../../http/pagination.js';
import type { SemanticCheck } from '../../http/semantic.js';
import { isId } from '../../lib/ids.js';
import { validateAnswers } from './answers.js';
import { normaliseQuestions, type QuestionInput } from './questions.js';
import * as surveys from './repository.js';
import * as responses from './responses-repository.js';
import * as service from './service.js';

/** Malformed ids are answered like unknown ones, without a query. */
function surveyIdOrThrow(id: string): string {
  if (!isId('srv', id)) throw notFound('survey', id);
  return id;
}

export const listSurveys: Handler<'listSurveys'> = async ({ query, auth, deps }) => {
  const page = pageRequest(query);
  const { rows, total } = await surveys.listSurveys(deps.db, tenantOf(auth), {
    status: query.status,
    search: query.search,
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: rows.map(service.toSurvey), pagination: paginationOf(page, total) };
};

export const createSurvey: Handler<'createSurvey'> = async ({ body, auth, deps }) => ({
  status: 201,
  data: await service.createSurvey(deps.db, tenantOf(auth), body),
});

export const getSurvey: Handler<'getSurvey'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: service.toSurvey(await service.findSurveyOrThrow(deps.db, tenantOf(auth), surveyIdOrThrow(params.id))),
});

export const updateSurvey: Handler<'updateSurvey'> = async ({ params, body, auth, deps }) => ({
  status: 200,
  data: await service.updateSurvey(deps.db, tenantOf(auth), surveyIdOrThrow(params.id), body),
});

export const deleteSurvey: Handler<'deleteSurvey'> = async ({ params, auth, deps }) => {
  // Responses go with it (ON DELETE CASCADE).
  const row = await surveys.deleteSurvey(deps.db, tenantOf(auth), surveyIdOrThrow(params.id));
  if (!row) throw notFound('survey', params.id);
  return { status: 200, data: { id: row.id, deleted: true } };
};

export const launchSurvey: Handler<'launchSurvey'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: await service.transitionSurvey(deps.db, tenantOf(auth), surveyIdOrThrow(params.id), 'launch'),
});

export const pauseSurvey: Handler<'pauseSurvey'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: await service.transitionSurvey(deps.db, tenantOf(auth), surveyIdOrThrow(params.id), 'pause'),
});

export const closeSurvey: Handler<'closeSurvey'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: await service.transitionSurvey(deps.db, tenantOf(auth), surveyIdOrThrow(params.id), 'close'),
});

export const listResponses: Handler<'listResponses'> = async ({ params, query, auth, deps }) => {
  const tenant = tenantOf(auth);
  const surveyId = surveyIdOrThrow(params.id);
  const submittedAfter = query.submittedAfter === undefined ? undefined : new Date(query.submittedAfter);
  const submittedBefore = query.submittedBefore === undefined ? undefined : new Date(query.submittedBefore);
  if (submittedAfter && submittedBefore && submittedBefore <= submittedAfter) {
    throw validationFailed([
      { path: '/query/submittedBefore', message: 'must be later than submittedAfter', code: 'out_of_range' },
    ]);
  }
  await service.findSurveyOrThrow(deps.db, tenant, surveyId);
  const page = pageRequest(query);
  const { rows, total } = await responses.listResponses(deps.db, tenant, surveyId, {
    submittedAfter,
    submittedBefore,
    respondentExternalId: query.respondentExternalId,
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: rows.map(service.toResponse), pagination: paginationOf(page, total) };
};

export const submitResponse: Handler<'submitResponse'> = async ({ params, body, auth, deps }) => ({
  status: 201,
  data: await service.submitResponse(deps.db, tenantOf(auth), surveyIdOrThrow(params.id), body),
});

export const getResponse: Handler<'getResponse'> = async ({ params, auth, deps }) => {
  const surveyId = surveyIdOrThrow(params.id);
  if (!isId('rsp', params.responseId)) throw notFound('response', params.responseId);
  const row = await responses.findResponse(deps.db, tenantOf(auth), surveyId, params.responseId);
  if (!row) throw notFound('response', params.responseId);
  return { status: 200, data: service.toResponse(row) };
};

export const deleteResponse: Handler<'deleteResponse'> = async ({ params, auth, deps }) => {
  const surveyId = surveyIdOrThrow(params.id);
  if (!isId('rsp', params.responseId)) throw notFound('response', params.responseId);
  await service.deleteResponse(deps.db, tenantOf(auth), surveyId, params.responseId);
  return { status: 200, data: { id: params.responseId, deleted: true } };
};

/**
 * The answer checks of submitResponse, run when the request also breaks the schema so that one 400 lists every
 * problem (http/semantic.ts). Tolerant of a malformed body: only well-formed answers are checked.
 */
export const checkSubmitResponse: SemanticCheck = async ({ params, body, auth, deps }) => {
  const surveyId = typeof params.id === 'string' && isId('srv', params.id) ? params.id : undefined;
  const answers = (body as { answers?: unknown } | undefined)?.answers;
  if (!surveyId || !Array.isArray(answers)) return [];
  const survey = await surveys.findSurvey(deps.db, tenantOf(auth), surveyId);
  if (!survey) return [];
  const wellFormed = answers.filter(
    (answer): answer is { questionId: string; value: unknown } =>
      typeof answer === 'object' && answer !== null && typeof answer.questionId === 'string',
  );
  return wellFormed.length === answers.length ? validateAnswers(survey.questions, wellFormed as never) : [];
};

/**
 * The checks of a survey's questions that the schema cannot express (unique question and choice ids, selection
 * bounds against the choices), run when createSurvey or updateSurvey also breaks the schema, so that one 400 lists
 * every problem (http/semantic.ts). Tolerant of a malformed body: anything that is not an object, a string id, an
 * array of choices or an integer bound is read as absent.
 */
export const checkSurveyQuestions: SemanticCheck = async ({ body }) => {
  const questions = (body as { questions?: unknown } | undefined)?.questions;
  if (!Array.isArray(questions)) return [];
  return normaliseQuestions(questions.map(asQuestionInput)).problems;
};

function asQuestionInput(value: unknown): QuestionInput {
  const question = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const idOf = (item: unknown) =>
    typeof item === 'object' && item !== null && typeof (item as { id?: unknown }).id === 'string'
      ? (item as { id: string }).id
      : undefined;
  const bound = (n: unknown) => (typeof n === 'number' && Number.isInteger(n) ? n : undefined);
  const choices = Array.isArray(question.choices)
    ? question.choices.map((choice) => ({ id: idOf(choice), label: '' }))
    : [];
  return {
    type: question.type,
    text: '',
    id: idOf(question),
    choices,
    minSelections: bound(question.minSelections),
    maxSelections: bound(question.maxSelections),
  } as QuestionInput;
}
