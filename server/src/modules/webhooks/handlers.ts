/** Webhook operations: one handler per operationId. */
import { notFound } from '../../http/errors.js';
import { tenantOf, type Handler } from '../../http/handler.js';
import { pageRequest, paginationOf } from '../../http/pagination.js';
import { isId } from '../../lib/ids.js';
import * as repo from './repository.js';
import * as service from './service.js';

function webhookIdOrThrow(id: string): string {
  if (!isId('whk', id)) throw notFound('webhook', id);
  return id;
}

export const listWebhooks: Handler<'listWebhooks'> = async ({ query, auth, deps }) => {
  const page = pageRequest(query);
  const { rows, total } = await repo.listWebhooks(deps.db, tenantOf(auth), {
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: rows.map(service.toWebhook), pagination: paginationOf(page, total) };
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

export const getWebhook: Handler<'getWebhook'> = async ({ params, auth, deps }) => {
  const row = await service.findWebhookOrThrow(deps.db, tenantOf(auth), webhookIdOrThrow(params.id));
  return { status: 200, data: service.toWebhook(row) };
};

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
  const id = webhookIdOrThrow(params.id);
  if (!(await repo.deleteWebhook(deps.db, tenantOf(auth), id))) throw notFound('webhook', id);
  return { status: 200, data: { id, deleted: true } };
};

export const rotateWebhookSecret: Handler<'rotateWebhookSecret'> = async ({ params, auth, deps }) => {
  return { status: 200, data: await service.rotateSecret(deps.db, tenantOf(auth), webhookIdOrThrow(params.id)) };
};

export const sendTestWebhook: Handler<'sendTestWebhook'> = async ({ params, auth, deps }) => {
  return { status: 202, data: await service.sendTest(deps.db, tenantOf(auth), webhookIdOrThrow(params.id)) };
};

export const listWebhookDeliveries: Handler<'listWebhookDeliveries'> = async ({ params, query, auth, deps }) => {
  const tenant = tenantOf(auth);
  const id = webhookIdOrThrow(params.id);
  await service.findWebhookOrThrow(deps.db, tenant, id);
  const page = pageRequest(query);
  const { rows, total } = await repo.listDeliveries(deps.db, tenant, id, {
    status: query.status,
    eventType: query.eventType,
    createdAfter: query.createdAfter ? new Date(query.createdAfter) : undefined,
    createdBefore: query.createdBefore ? new Date(query.createdBefore) : undefined,
    limit: page.pageSize,
    offset: page.offset,
  });
  return { status: 200, data: rows.map(service.toDelivery), pagination: paginationOf(page, total) };
};

export const getWebhookDelivery: Handler<'getWebhookDelivery'> = async ({ params, auth, deps }) => {
  const id = webhookIdOrThrow(params.id);
  if (!isId('whd', params.deliveryId)) throw notFound('delivery', params.deliveryId);
  const row = await repo.findDelivery(deps.db, tenantOf(auth), id, params.deliveryId);
  if (!row) throw notFound('delivery', params.deliveryId);
  return { status: 200, data: service.toDelivery(row) };
};

export const redeliverWebhookDelivery: Handler<'redeliverWebhookDelivery'> = async ({ params, auth, deps }) => {
  const id = webhookIdOrThrow(params.id);
  if (!isId('whd', params.deliveryId)) throw notFound('delivery', params.deliveryId);
  return { status: 202, data: await service.redeliver(deps.db, tenantOf(auth), id, params.deliveryId) };
};
