/** AI operations: thin adapters from the contract to the service. */
import { notFound } from '../../http/errors.js';
import { tenantOf, type Handler } from '../../http/handler.js';
import { isId } from '../../lib/ids.js';
import * as service from './service.js';

/** Malformed ids are answered like unknown ones, without a query. */
function idOrThrow(prefix: 'srv' | 'ana', what: string, id: string): string {
  if (!isId(prefix, id)) throw notFound(what, id);
  return id;
}

export const generateSurvey: Handler<'generateSurvey'> = async ({ body, auth, deps }) => {
  const { survey, provider, model } = await service.generateSurvey(deps, tenantOf(auth), body);
  return { status: 201, data: survey, headers: { 'AI-Provider': provider, 'AI-Model': model } };
};

export const generateAiAnalysis: Handler<'generateAiAnalysis'> = async ({ params, body, auth, deps }) => ({
  status: 202,
  data: await service.startAnalysis(deps, tenantOf(auth), idOrThrow('srv', 'survey', params.id), body ?? {}),
});

export const getLatestAiAnalysis: Handler<'getLatestAiAnalysis'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: await service.latestAnalysis(deps, tenantOf(auth), idOrThrow('srv', 'survey', params.id)),
});

export const getAiAnalysis: Handler<'getAiAnalysis'> = async ({ params, auth, deps }) => {
  const surveyId = idOrThrow('srv', 'survey', params.id);
  return {
    status: 200,
    data: await service.getAnalysis(deps, tenantOf(auth), surveyId, idOrThrow('ana', 'AI analysis', params.analysisId)),
  };
};
