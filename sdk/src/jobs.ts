/**
 * Helpers that wait for the service's asynchronous jobs, polling politely (`waitFor`: backoff from 0.5 s to 5 s,
 * a timeout, an AbortSignal). A job that ends in failure is returned, not thrown: read its `status`.
 */
import type { Client } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';
import { TimeoutError } from './errors.js';
import { waitFor, type WaitOptions } from './polling.js';
import type { AiAnalysis, Distribution, PrivacyRequest } from './types.js';
import { unwrap } from './unwrap.js';

async function named<T>(what: string, options: WaitOptions, wait: () => Promise<T>): Promise<T> {
  try {
    return await wait();
  } catch (error) {
    if (error instanceof TimeoutError)
      throw new TimeoutError(`${what} did not finish within ${options.timeoutMs ?? 300_000} ms`);
    throw error;
  }
}

const settledAnalysis = new Set(['completed', 'failed']);
/** Polls an AI analysis until it is `completed` or `failed`. */
export function waitForAiAnalysis(
  client: Client<paths>,
  surveyId: string,
  analysisId: string,
  options: WaitOptions = {},
): Promise<AiAnalysis> {
  const poll = async () =>
    (await unwrap(
      client.GET('/api/v1/surveys/{id}/analytics/ai/{analysisId}', {
        params: { path: { id: surveyId, analysisId } },
        signal: options.signal,
      }),
    )) as AiAnalysis;
  return named(`AI analysis ${analysisId}`, options, () =>
    waitFor(poll, (a) => settledAnalysis.has(a.status), options),
  );
}

/** A distribution is settled once it is no longer `scheduled` or `sending` (sent, held, cancelled or failed). */
const unsettledDistribution = new Set(['scheduled', 'sending']);
/**
 * Polls a distribution until its send has happened (or was held, cancelled or failed). A distribution scheduled
 * for later stays `scheduled` until then: give a `timeoutMs` that covers the schedule.
 */
export function waitForDistribution(
  client: Client<paths>,
  surveyId: string,
  distributionId: string,
  options: WaitOptions = {},
): Promise<Distribution> {
  const poll = async () =>
    (await unwrap(
      client.GET('/api/v1/surveys/{surveyId}/distributions/{distributionId}', {
        params: { path: { surveyId, distributionId } },
        signal: options.signal,
      }),
    )) as Distribution;
  return named(`Distribution ${distributionId}`, options, () =>
    waitFor(poll, (d) => !unsettledDistribution.has(d.status), options),
  );
}

const settledPrivacyRequest = new Set(['completed', 'failed']);
/** Polls a privacy request (access or erasure) until it is `completed` or `failed`. */
export function waitForPrivacyRequest(
  client: Client<paths>,
  requestId: string,
  options: WaitOptions = {},
): Promise<PrivacyRequest> {
  const poll = async () =>
    (await unwrap(
      client.GET('/api/v1/privacy-requests/{id}', { params: { path: { id: requestId } }, signal: options.signal }),
    )) as PrivacyRequest;
  return named(`Privacy request ${requestId}`, options, () =>
    waitFor(poll, (r) => settledPrivacyRequest.has(r.status), options),
  );
}
