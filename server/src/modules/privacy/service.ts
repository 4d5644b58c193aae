/**
 * Privacy request rules: checking and accepting a request (row and queue entry in one transaction), reading
 * requests, serving an access file, and mapping rows to the contract's `PrivacyRequest`.
 */
import { Readable } from 'node:stream';
import type PgBoss from 'pg-boss';
import type { Db, DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import type { PrivacyRequest, PrivacyRequestCreate } from '../../generated/openapi.js';
import { ApiError, invalidState, notFound, validationFailed, type ErrorDetail } from '../../http/index.js';
import { isId, newId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import { parseRange } from '../exports/index.js';
import { privacyQueue, type PrivacyJobData } from './queue.js';
import { findRequest, insertRequest, listRequests, readFileSlice, type RequestRow } from './repository.js';
import { newFingerprint, subjectOf } from './subject.js';
import type { PrivacyRequestStatus, PrivacyRequestType } from './tables.js';

export type { PrivacyRequest };

/** `retainedUntil`: three years after acceptance (the clean-up's interval, REQUEST_RETENTION, in the database). */
function retainedUntil(createdAt: Date): string {
  const until = new Date(createdAt);
  until.setUTCFullYear(until.getUTCFullYear() + 3);
  return until.toISOString();
}

/** A request as the contract shows it: never the subject's identifier, which the row holds only while it runs. */
export function toPrivacyRequest(row: RequestRow): PrivacyRequest {
  const completed = row.status === 'completed';
  const file = completed && row.type === 'access' && row.file_size !== null;
  return {
    id: row.id,
    type: row.type,
    scope: row.scope,
    dryRun: row.dry_run,
    status: row.status,
    subject: { kind: row.subject_kind, fingerprint: row.subject_hash },
    inventory: completed ? row.inventory : null,
    webhookRecipients: completed ? row.webhook_recipients : [],
    downloadUrl: file ? `/api/v1/privacy-requests/${row.id}/download` : null,
    error: row.status === 'failed' ? row.error : null,
    createdAt: iso(row.created_at),
    startedAt: iso(row.started_at),
    completedAt: iso(row.completed_at),
    fileExpiresAt: file ? iso(row.file_expires_at) : null,
    retainedUntil: retainedUntil(row.created_at),
  };
}

export async function findRequestOrThrow(db: Db, tenant: Tenant, id: string): Promise<RequestRow> {
  const row = isId('prv', id) ? await findRequest(db, tenant, id) : undefined;
  if (!row) throw notFound('privacy request', id);
  return row;
}

export async function createRequest(
  deps: { db: Db; boss: PgBoss },
  tenant: Tenant,
  body: PrivacyRequestCreate,
  audit?: (tx: DbOrTx, requestId: string) => Promise<void>,
): Promise<PrivacyRequest> {
  const problems: ErrorDetail[] = [];
  if (body.type === 'erasure' && body.scope === undefined) {
    problems.push({
      path: '/body/scope',
      code: 'required',
      message: 'an erasure needs a scope: identity (keep the responses without the person) or identity_and_responses',
    });
  }
  if (body.type === 'access' && body.scope !== undefined) {
    problems.push({
      path: '/body/scope',
      code: 'invalid_value',
      message: 'scope applies to erasures only; an access request reaches everything about the person',
    });
  }
  if (problems.length > 0) throw validationFailed(problems);

  const subject = subjectOf(body.subject);
  const { salt, fingerprint } = newFingerprint(subject);
  const row = await deps.db.transaction().execute(async (tx) => {
    const inserted = await insertRequest(tx, tenant, {
      id: newId('prv'),
      type: body.type,
      scope: body.type === 'erasure' ? (body.scope ?? null) : null,
      dryRun: body.dryRun ?? false,
      subjectKind: subject.kind,
      subjectValue: subject.value,
      salt,
      fingerprint,
    });
    const data: PrivacyJobData = {
      requestId: inserted.id,
      organizationId: tenant.organizationId,
      environment: tenant.environment,
    };
    await privacyQueue.send(deps.boss, tx, data, { priority: 1 });
    await audit?.(tx, inserted.id);
    return inserted;
  });
  return toPrivacyRequest(row);
}

export async function getRequest(db: Db, tenant: Tenant, id: string): Promise<PrivacyRequest> {
  return toPrivacyRequest(await findRequestOrThrow(db, tenant, id));
}

export async function listPrivacyRequests(
  db: Db,
  tenant: Tenant,
  filter: { type?: PrivacyRequestType; status?: PrivacyRequestStatus; limit: number; offset: number },
): Promise<{ requests: PrivacyRequest[]; total: number }> {
  const { rows, total } = await listRequests(db, tenant, filter);
  return { requests: rows.map(toPrivacyRequest), total };
}

/** A file download: the whole file (200) or one byte range of it (206), with its headers. */
export interface AccessFileReply {
  status: 200 | 206;
  contentType: string;
  body: Readable;
  headers: Record<string, string>;
}

/** Slices of at most this many bytes are read from the stored file, one at a time. */
const SLICE = 1024 * 1024;

/**
 * The file of a completed access request, whole or one range, answered as export files are (`Range`, `If-Range`,
 * 416 beyond the end). 409 without a file, 410 once it expired or an erasure deleted it.
 */
export async function accessFile(
  db: Db,
  tenant: Tenant,
  id: string,
  request: { range: string | undefined; ifRange: string | undefined },
): Promise<AccessFileReply> {
  const row = await findRequestOrThrow(db, tenant, id);
  if (row.type !== 'access' || row.dry_run || row.status !== 'completed' || row.file_size === null) {
    throw invalidState(
      row.type !== 'access'
        ? `Privacy request ${row.id} is an erasure; only access requests have a file.`
        : row.dry_run
          ? `Privacy request ${row.id} is a dry run; it made no file.`
          : `Privacy request ${row.id} is ${row.status}; download its file once it is completed.`,
    );
  }
  if (row.file_erased_at) {
    throw new ApiError(
      410,
      'export_erased',
      `The file of privacy request ${row.id} was deleted by privacy request ${row.file_erased_by} (an erasure of the same person).`,
    );
  }
  if (row.file_deleted_at || (row.file_expires_at && row.file_expires_at.getTime() <= Date.now())) {
    throw new ApiError(
      410,
      'export_expired',
      `The file of privacy request ${row.id} expired at ${row.file_expires_at?.toISOString()}; make a new access request.`,
    );
  }
  const size = row.file_size;
  const etag = `"${row.id}"`;
  const range =
    request.ifRange === undefined || request.ifRange === etag
      ? parseRange(request.range, size)
      : ({ kind: 'full' } as const);
  if (range.kind === 'unsatisfiable') {
    throw new ApiError(
      416,
      'range_not_satisfiable',
      `The range ${request.range} is outside the file (${size} bytes).`,
      undefined,
      { 'Content-Range': `bytes */${size}` },
    );
  }
  const [start, end] = range.kind === 'partial' ? [range.start, range.end] : [0, size - 1];
  async function* bytes() {
    for (let at = start; at <= end; at += SLICE) {
      const part = await readFileSlice(db, tenant, row.id, at, Math.min(SLICE, end - at + 1));
      // Deleted since the request began (expired, erased): end the body short rather than send another file.
      if (!part) throw new Error(`the file of privacy request ${row.id} is gone`);
      yield part;
    }
  }
  const common = {
    ETag: etag,
    'Accept-Ranges': 'bytes',
    'Content-Length': String(end - start + 1),
    'Content-Disposition': `attachment; filename="privacy-request-${row.id}.json"`,
  };
  return {
    status: range.kind === 'partial' ? 206 : 200,
    contentType: 'application/json',
    body: Readable.from(bytes(), { objectMode: false }),
    headers: range.kind === 'partial' ? { ...common, 'Content-Range': `bytes ${start}-${end}/${size}` } : common,
  };
}
