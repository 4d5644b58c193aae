/** Survey, translation and response operations: thin adapters from the contract to their services. */
import { pageRequest, paginationOf, tenantOf, type Handler, type SemanticCheck } from '../../http/index.js';
import { auditRead, auditSourceOf, recordAudit } from '../audit/index.js';
import * as responseService from './responses-service.js';
import * as service from './service.js';
import * as translationService from './translations-service.js';

const { surveyIdOrThrow } = service;

export const listSurveys: Handler<'listSurveys'> = async ({ query, auth, deps }) => {
  const page = pageRequest(query);
  const { surveys, total } = await service.listSurveys(deps.db, tenantOf(auth), {
    status: query.status,
    search: query.search,
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, dataJson: surveys, pagination: paginationOf(page, total) };
};

export const createSurvey: Handler<'createSurvey'> = async ({ body, auth, deps }) => ({
  status: 201,
  data: await service.createSurvey(deps.db, tenantOf(auth), body),
});

export const getSurvey: Handler<'getSurvey'> = async ({ params, query, auth, deps }) => ({
  status: 200,
  data: await service.getSurvey(deps.db, tenantOf(auth), params.id, query.version),
});

export const listSurveyVersions: Handler<'listSurveyVersions'> = async ({ params, query, auth, deps }) => {
  const page = pageRequest(query);
  const { versions, total } = await service.listSurveyVersions(deps.db, tenantOf(auth), params.id, {
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: versions, pagination: paginationOf(page, total) };
};

export const updateSurvey: Handler<'updateSurvey'> = async (input) => {
  const { params, body, auth, deps } = input;
  const id = surveyIdOrThrow(params.id);
  const source = auditSourceOf(input);
  const survey = await service.updateSurvey(deps.db, tenantOf(auth), id, body, (tx) =>
    recordAudit(tx, source, { action: 'survey.privacy_changed', target: { type: 'survey', id } }),
  );
  return { status: 200, data: survey };
};

export const deleteSurvey: Handler<'deleteSurvey'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: { id: await service.deleteSurvey(deps.db, tenantOf(auth), params.id), deleted: true },
});

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

export const getSurveyTranslation: Handler<'getSurveyTranslation'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: await translationService.getTranslation(deps.db, tenantOf(auth), params.id, params.language),
});

export const upsertSurveyTranslation: Handler<'upsertSurveyTranslation'> = async ({ params, body, auth, deps }) => {
  const { translation, created } = await translationService.putTranslation(
    deps.db,
    tenantOf(auth),
    params.id,
    params.language,
    body,
  );
  return created ? { status: 201, data: translation } : { status: 200, data: translation };
};

export const deleteSurveyTranslation: Handler<'deleteSurveyTranslation'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: {
    id: await translationService.deleteTranslation(deps.db, tenantOf(auth), params.id, params.language),
    deleted: true,
  },
});

// A read that showed who answered (identified surveys) is audited; anonymous and confidential ones show nobody.
const showedSomeone = (responses: readonly { respondentExternalId: string | null }[]) =>
  responses.some((r) => r.respondentExternalId !== null);

export const listResponses: Handler<'listResponses'> = async (input) => {
  const { params, query, auth, deps } = input;
  const page = pageRequest(query);
  const { responses, total } = await responseService.listResponses(deps.db, tenantOf(auth), params.id, {
    submittedAfter: query.submittedAfter,
    submittedBefore: query.submittedBefore,
    respondentExternalId: query.respondentExternalId,
    limit: page.pageSize,
    offset: page.offset,
  });
  if (showedSomeone(responses))
    await auditRead(input, {
      action: 'responses.read',
      target: { type: 'survey', id: params.id },
    });
  return { status: 200, data: responses, pagination: paginationOf(page, total) };
};

export const submitResponse: Handler<'submitResponse'> = async ({ params, body, auth, deps }) => ({
  status: 201,
  data: await responseService.submitResponse(deps.db, tenantOf(auth), surveyIdOrThrow(params.id), body),
});

export const getResponse: Handler<'getResponse'> = async (input) => {
  const { params, auth, deps } = input;
  const response = await responseService.getResponse(deps.db, tenantOf(auth), params.id, params.responseId);
  if (showedSomeone([response]))
    await auditRead(input, {
      action: 'responses.read',
      target: { type: 'response', id: response.id },
    });
  return { status: 200, data: response };
};

export const deleteResponse: Handler<'deleteResponse'> = async ({ params, auth, deps }) => {
  await responseService.deleteResponse(deps.db, tenantOf(auth), params.id, params.responseId);
  return { status: 200, data: { id: params.responseId, deleted: true } };
};

/** The answer checks of submitResponse, for a request refused by the schema too (http/semantic.ts). */
export const checkSubmitResponse: SemanticCheck = async ({ params, body, auth, deps }) =>
  responseService.submissionProblems(deps.db, tenantOf(auth), params.id, body);

/** The question checks of createSurvey and updateSurvey, for a request refused by the schema too. */
export const checkSurveyQuestions: SemanticCheck = async ({ body }) => service.questionProblems(body);

/** The language and id checks of upsertSurveyTranslation, for a request refused by the schema too. */
export const checkSurveyTranslation: SemanticCheck = async ({ params, body, auth, deps }) =>
  translationService.translationCheckProblems(deps.db, tenantOf(auth), params.id, params.language, body);
