/** Webhook operations: one handler per operationId. */
import { pageRequest, paginationOf, tenantOf, type Handler } from '../../http/index.js';
import * as service from './service.js';

const { webhookIdOrThrow } = service;

export const listWebhooks: Handler<'listWebhooks'> = async ({ query, auth, deps }) => {
  const page = pageRequest(query);
  const { webhooks, total } = await service.listWebhooks(deps.db, tenantOf(auth), {
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: webhooks, pagination: paginationOf(page, total) };
};

export const createWebhook: Handler<'createWebhook'> = async ({ body, auth, deps }) => {
  const { webhook, secret } = await service.createWebhook(
    deps.db,
    tenantOf(auth),
    body,
    deps.config.allowLoopbackWebhooks,
  );
  return { status: 201, data: { ...webhook, secret } };
};

export const getWebhook: Handler<'getWebhook'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: await service.getWebhook(deps.db, tenantOf(auth), params.id),
});

export const updateWebhook: Handler<'updateWebhook'> = async ({ params, body, auth, deps }) => {
  const data = await service.updateWebhook(
    deps.db,
    tenantOf(auth),
    webhookIdOrThrow(params.id),
    body,
    deps.config.allowLoopbackWebhooks,
  );
  return { status: 200, data };
};

export const deleteWebhook: Handler<'deleteWebhook'> = async ({ params, auth, deps }) => {
  await service.deleteWebhook(deps.db, tenantOf(auth), params.id);
  return { status: 200, data: { id: params.id, deleted: true } };
};

export const rotateWebhookSecret: Handler<'rotateWebhookSecret'> = async ({ params, auth, deps }) => {
  return { status: 200, data: await service.rotateSecret(deps.db, tenantOf(auth), webhookIdOrThrow(params.id)) };
};

export const sendTestWebhook: Handler<'sendTestWebhook'> = async ({ params, auth, deps }) => {
  return { status: 202, data: await service.sendTest(deps.db, tenantOf(auth), webhookIdOrThrow(params.id)) };
};

export const listWebhookDeliveries: Handler<'listWebhookDeliveries'> = async ({ params, query, auth, deps }) => {
  const page = pageRequest(query);
  const { deliveries, total } = await service.listDeliveries(deps.db, tenantOf(auth), params.id, {
    status: query.status,
    eventType: query.eventType,
    createdAfter: query.createdAfter ? new Date(query.createdAfter) : undefined,
    createdBefore: query.createdBefore ? new Date(query.createdBefore) : undefined,
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: deliveries, pagination: paginationOf(page, total) };
};

export const getWebhookDelivery: Handler<'getWebhookDelivery'> = async ({ params, auth, deps }) => ({
  status: 200,
  data: await service.getDelivery(deps.db, tenantOf(auth), params.id, params.deliveryId),
});

export const redeliverWebhookDelivery: Handler<'redeliverWebhookDelivery'> = async ({ params, auth, deps }) => {
  return { status: 202, data: await service.redeliver(deps.db, tenantOf(auth), params.id, params.deliveryId) };
};
