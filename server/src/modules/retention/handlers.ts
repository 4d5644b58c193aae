/** Retention operations: one handler per operationId. */
import { tenantOf, type Handler } from '../../http/index.js';
import { auditSourceOf, recordAudit } from '../audit/index.js';
import * as service from './service.js';

export const getRetentionSettings: Handler<'getRetentionSettings'> = async ({ auth, deps }) => ({
  status: 200,
  data: await service.getSettings(deps.db, tenantOf(auth)),
});

export const updateRetentionSettings: Handler<'updateRetentionSettings'> = async (input) => {
  const { body, auth, deps } = input;
  const source = auditSourceOf(input);
  const settings = await service.updateSettings(deps.db, tenantOf(auth), body, (tx) =>
    recordAudit(tx, source, { action: 'settings.updated', target: { type: 'settings', id: 'retention' } }),
  );
  return { status: 200, data: settings };
};

export const previewRetention: Handler<'previewRetention'> = async ({ auth, deps }) => {
  const asOf = new Date();
  return {
    status: 200,
    data: { asOf: asOf.toISOString(), wouldRemove: await service.preview(deps.db, tenantOf(auth), asOf) },
  };
};
