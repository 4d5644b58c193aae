import { errorFromResponse } from './errors.js';

/** What an openapi-fetch call resolves to: the parsed success body, or the parsed error body. */
export type ApiResult<Body> =
  { data: Body; error?: never; response: Response } | { data?: never; error: unknown; response: Response };

/** The `data` member of a success envelope (the body itself when it is not an envelope). */
export type EnvelopeData<Body> = NonNullable<Body> extends { data: infer Data } ? Data : NonNullable<Body>;

/**
 * Resolves an openapi-fetch call to its whole success envelope (`data`, `meta`, `pagination`), or throws the
 * typed `SurveyServiceError` subclass for an error answer.
 */
export async function unwrapEnvelope<Body>(
  result: Promise<ApiResult<Body>> | ApiResult<Body>,
): Promise<NonNullable<Body>> {
  const settled = await result;
  if (!settled.response.ok) throw errorFromResponse(settled.response, settled.error);
  return settled.data as NonNullable<Body>;
}

/**
 * Resolves an openapi-fetch call to the envelope's `data`, or throws the typed error:
 * `const survey = await unwrap(client.GET('/api/v1/surveys/{id}', { params: { path: { id } } }))`.
 */
export async function unwrap<Body>(result: Promise<ApiResult<Body>> | ApiResult<Body>): Promise<EnvelopeData<Body>> {
  const body = await unwrapEnvelope(result);
  if (typeof body === 'object' && body !== null && 'data' in body) return (body as { data: EnvelopeData<Body> }).data;
  return body as EnvelopeData<Body>;
}
