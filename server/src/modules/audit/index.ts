/**
 * The audit log: an append-only record of reads of identified data and of changes a privacy officer is asked about,
 * written by the modules whose handlers do them (`recordAudit`, `auditSourceOf`), read through `listAuditLog`.
 *
 * Other modules and the HTTP layer import only from this file.
 */
import { tenantOf, type HandlerInput, type OperationId } from '../../http/handler.js';
import type { AuditSource } from './service.js';

export { auditJobs } from './jobs.js';
export { recordAudit, type AuditRecord, type AuditSource } from './service.js';
export type { AuditTables } from './tables.js';

/** The source of an entry written for an API request: its key, request id and client address. */
export function auditSourceOf<Id extends OperationId>(input: HandlerInput<Id>): AuditSource {
  return {
    tenant: tenantOf(input.auth),
    actor: { keyId: input.auth.apiKeyId, name: input.auth.apiKeyName },
    requestId: input.requestId,
    clientAddress: input.clientAddress ?? null,
  };
}
