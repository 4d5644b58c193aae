/**
 * Standard Webhooks (https://www.standardwebhooks.com) verification for the events the service delivers.
 * Each delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, several space-separated while a secret rotates),
 * signed with the subscription's `whsec_…` secret. Verify the raw body exactly as received, before any
 * JSON parsing: re-serialized JSON does not match the signature.
 */
import { Webhook } from 'standardwebhooks';
import type { WebhookEvent } from './types.js';

/** The delivery is not authentic: missing headers, wrong signature or secret, or a timestamp outside 5 minutes. */
export class WebhookVerificationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebhookVerificationError';
  }
}

export type WebhookHeaders = Record<string, string | string[] | undefined> | Headers;

function header(headers: WebhookHeaders, name: string): string {
  if (headers instanceof Headers) return headers.get(name) ?? '';
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    return Array.isArray(value) ? value.join(' ') : (value ?? '');
  }
  return '';
}

/**
 * Verifies a webhook delivery and returns the parsed event, or throws `WebhookVerificationError`.
 * `payload` is the raw request body (string, or a Buffer/Uint8Array of UTF-8); `headers` as Node's `req.headers` or a
 * `Headers`;
 * `secret` the subscription's `whsec_…` secret. Deliveries older or newer than 5 minutes are refused
 * (replay protection); de-duplicate on `webhook-id`, since a delivery may arrive more than once.
 */
export function verifyWebhook<T = WebhookEvent>(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
): T {
  const required = {
    'webhook-id': header(headers, 'webhook-id'),
    'webhook-timestamp': header(headers, 'webhook-timestamp'),
    'webhook-signature': header(headers, 'webhook-signature'),
  };
  let webhook: Webhook;
  try {
    webhook = new Webhook(secret);
  } catch (error) {
    throw new WebhookVerificationError('Invalid webhook secret', { cause: error });
  }
  try {
    const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
    return webhook.verify(body, required) as T;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new WebhookVerificationError(message, { cause: error });
  }
}

/**
 * Signs a payload the way the service does, returning the three headers. For tests of webhook receivers;
 * `timestamp` defaults to now.
 */
export function signWebhook(
  payload: string,
  secret: string,
  options: { id: string; timestamp?: Date },
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  const timestamp = options.timestamp ?? new Date();
  return {
    'webhook-id': options.id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(options.id, timestamp, payload),
  };
}
