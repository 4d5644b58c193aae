/** Audit log operations: one handler per operationId. */
import { tenantOf, type Handler } from '../../http/index.js';
import * as service from './service.js';

export const listAuditLog: Handler<'listAuditLog'> = async ({ query, auth, deps }) => {
  const { entries, pagination } = await service.listAuditLog(deps.db, tenantOf(auth), query ?? {});
  return { status: 200, data: entries, pagination };
};
