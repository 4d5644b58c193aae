/**
 * The audit log: an append-only record of reads of identified data and of changes a privacy officer is asked about,
 * written by the modules whose handlers do them (`recordAudit`, `auditSourceOf`), read through `listAuditLog`.
 *
 * Other modules and the HTTP layer import only from this file.
 */
import { tenantOf, type HandlerInput, type OperationId } from '../../http/index.js';
import { recordAudit, type AuditRecord, type AuditSource } from './service.js';

export { auditJobs } from './jobs.js';
export { recordAudit, type AuditRecord, type AuditSource };
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

/**
 * The entry of a read that showed identified data, written after the read and before its answer. Through the
 * bookkeeping pool, whose commits do not wait for the disk: an entry is then lost only if PostgreSQL itself crashes
 * within a fraction of a second of the read (the API process dying loses nothing: the insert has returned), and a
 * read costs 1.2× instead of 1.5× (BENCHMARKS.md, "Audit log"). Changes write theirs in their own transaction.
 */
export function auditRead<Id extends OperationId>(input: HandlerInput<Id>, record: AuditRecord): Promise<void> {
  return recordAudit(input.deps.counters, auditSourceOf(input), record);
}
