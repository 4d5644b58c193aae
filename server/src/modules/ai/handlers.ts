/** AI operations: thin adapters from the contract to the service. */
import { idOrNotFound, tenantOf, type Handler } from '../../http/index.js';
import * as service from './service.js';

export const generateSurvey: Handler<'generateSurvey'> = async ({ body, auth, deps }) => {
  const { survey, adjustments, provider, model } = await service.generateSurvey(deps, tenantOf(auth), body);
  return { status: 201, data: survey, adjustments, headers: { 'AI-Provider': provider, 'AI-Model': model } };
};

export const generateAiAnalysis: Handler<'generateAiAnalysis'> = async ({ params, body, auth, deps }) => ({
  status: 202,
  data: await service.startAnalysis(deps, tenantOf(auth), idOrNotFound('srv', 'survey', params.id), body ?? {}),
});

export const getLatestAiAnalysis: Handler<'getLatestAiAnalysis'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: await service.latestAnalysis(deps, tenantOf(auth), idOrNotFound('srv', 'survey', params.id)),
});

export const getAiAnalysis: Handler<'getAiAnalysis'> = async ({ params, auth, deps }) => {
  const surveyId = idOrNotFound('srv', 'survey', params.id);
  return {
    status: 200,
    data: await service.getAnalysis(
      deps,
      tenantOf(auth),
      surveyId,
      idOrNotFound('ana', 'AI analysis', params.analysisId),
    ),
  };
};
