/** verifyWebhook: Standard Webhooks signatures, checked independently of the SDK's own signWebhook. */
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook, WebhookVerificationError } from '@survey-service/sdk';

const rawSecret = randomBytes(32);
const secret = `whsec_${rawSecret.toString('base64')}`;
const event = {
  id: 'evt_01JD3M8Q4W6T9ZK2F7X1B5N0C8',
  type: 'survey.launched',
  data: { id: 'srv_01JD3M8Q4W6T9ZK2F7X1B5N0C8' },
};
const body = JSON.stringify(event);

/** Signs by hand, straight from the specification, so the test does not trust the library it checks. */
function sign(id: string, timestamp: number, payload: string, key = rawSecret) {
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${payload}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${mac}` };
}
const now = () => Math.floor(Date.now() / 1000);

describe('verifyWebhook', () => {
  it('accepts a correctly signed payload and returns the parsed event', () => {
    expect(verifyWebhook(body, sign('msg_1', now(), body), secret)).toEqual(event);
  });

  it('accepts a Buffer body, Node-style header arrays and mixed-case names', () => {
    const headers = sign('msg_1', now(), body);
    const nodeHeaders = {
      'Webhook-Id': headers['webhook-id'],
      'webhook-timestamp': [headers['webhook-timestamp']],
      'webhook-signature': `v1,${randomBytes(32).toString('base64')} ${headers['webhook-signature']}`,
    };
    expect(verifyWebhook(Buffer.from(body), nodeHeaders, secret)).toEqual(event);
  });

  it('accepts a Headers object', () => {
    expect(verifyWebhook(body, new Headers(sign('msg_1', now(), body)), secret)).toEqual(event);
  });

  it('rejects a tampered body', () => {
    const headers = sign('msg_1', now(), body);
    expect(() => verifyWebhook(body.replace('launched', 'paused'), headers, secret)).toThrow(WebhookVerificationError);
  });

  it('rejects the wrong secret', () => {
    const headers = sign('msg_1', now(), body, randomBytes(32));
    expect(() => verifyWebhook(body, headers, secret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body, sign('msg_1', now(), body), 'not base64 !!')).toThrow(WebhookVerificationError);
  });

  it('rejects a timestamp outside the 5 minute tolerance', () => {
    expect(() => verifyWebhook(body, sign('msg_1', now() - 6 * 60, body), secret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body, sign('msg_1', now() + 6 * 60, body), secret)).toThrow(WebhookVerificationError);
    expect(verifyWebhook(body, sign('msg_1', now() - 4 * 60, body), secret)).toEqual(event);
  });

  it('rejects missing headers', () => {
    const { 'webhook-signature': _, ...rest } = sign('msg_1', now(), body);
    expect(() => verifyWebhook(body, rest, secret)).toThrow(WebhookVerificationError);
  });

  it('signWebhook produces what the spec prescribes', () => {
    const timestamp = new Date();
    const headers = signWebhook(body, secret, { id: 'msg_2', timestamp });
    expect(headers).toEqual(sign('msg_2', Math.floor(timestamp.getTime() / 1000), body));
    expect(verifyWebhook(body, headers, secret)).toEqual(event);
  });
});
