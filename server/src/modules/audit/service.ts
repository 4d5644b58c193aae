/**
 * The audit log: the one writer of its entries (`recordAudit`) and its reading, paged by cursor in both directions.
 * An entry is written with the action it records, by the caller's `db`: a change's transaction, or, for a read, one
 * insert before its answer is sent (a read that fails writes none, since nothing was shown).
 */
import type { DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { hasUnstorableCharacter, validationFailed } from '../../http/index.js';
import { newId } from '../../lib/ids.js';
import { insertEntry, listEntries, type AuditRow, type EntryFilters } from './repository.js';
import type { AuditAction, AuditEntry, AuditTargetType } from './tables.js';

/** Who acts and through which request: an API key's call, or the service's own job (`actor: 'system'`). */
export interface AuditSource {
  tenant: Tenant;
  actor: { keyId: string; name: string } | 'system';
  requestId: string | null;
  clientAddress: string | null;
}

export interface AuditRecord {
  action: AuditAction;
  target: { type: AuditTargetType; id: string | null };
}

export async function recordAudit(db: DbOrTx, source: AuditSource, record: AuditRecord): Promise<void> {
  const key = source.actor === 'system' ? null : source.actor;
  await insertEntry(db, {
    organization_id: source.tenant.organizationId,
    environment: source.tenant.environment,
    id: newId('aud'),
    actor_type: key ? 'key' : 'system',
    actor_key_id: key?.keyId ?? null,
    actor_name: key?.name ?? null,
    action: record.action,
    target_type: record.target.type,
    target_id: record.target.id,
    request_id: source.requestId,
    client_address: source.clientAddress,
  });
}

function toEntry(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    occurredAt: row.occurred_at.toISOString(),
    actor:
      row.actor_type === 'system'
        ? { type: 'system', keyId: null, name: null }
        : { type: 'key', keyId: row.actor_key_id, name: row.actor_name },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    requestId: row.request_id,
    clientAddress: row.client_address,
  };
}

export interface AuditQuery {
  action?: AuditAction;
  actor?: string;
  targetId?: string;
  from?: string;
  to?: string;
  order?: 'newest' | 'oldest';
  cursor?: string;
  limit?: number;
}

type Order = 'newest' | 'oldest';
type FilterValues = Pick<AuditQuery, 'action' | 'actor' | 'targetId' | 'from' | 'to'>;
const filterNames = ['action', 'actor', 'targetId', 'from', 'to'] as const;

/**
 * A cursor: the page's edge (`id`), which way to go from it (`after`: on in the list's order, `before`: back), and
 * the list's filters and order, base64url JSON. Not a secret and not signed: a cursor that says other than it
 * should can only page the caller's own log.
 */
interface Cursor {
  way: 'after' | 'before';
  id: string;
  order: Order;
  filters: FilterValues;
}

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString('base64url');

function badCursor(message: string): never {
  throw validationFailed([{ path: '/query/cursor', message, code: 'invalid_value' }]);
}

const auditActions: readonly AuditAction[] = [
  'responses.read',
  'respondents.read',
  'recipients.read',
  'scim_users.read',
  'export.downloaded',
  'privacy_request.downloaded',
  'api_key.created',
  'api_key.revoked',
  'settings.updated',
  'survey.privacy_changed',
  'privacy_request.created',
  'retention.run',
];
const isInstant = (v: string) => /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v));

/** What the contract lets each filter be: a cursor is the client's text, and must not smuggle in anything else. */
const filterChecks: Record<(typeof filterNames)[number], (value: string) => boolean> = {
  action: (v) => (auditActions as readonly string[]).includes(v),
  actor: (v) => /^(system|key_[0-9A-HJKMNP-TV-Z]{26})$/.test(v),
  targetId: (v) => v.length >= 1 && v.length <= 255 && !hasUnstorableCharacter(v),
  from: isInstant,
  to: isInstant,
};

function decodeCursor(text: string): Cursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    badCursor('is not a cursor of this list');
  }
  const cursor = value as Partial<Cursor> | null;
  if (
    typeof cursor !== 'object' ||
    cursor === null ||
    (cursor.way !== 'after' && cursor.way !== 'before') ||
    typeof cursor.id !== 'string' ||
    !/^aud_[0-9A-HJKMNP-TV-Z]{26}$/.test(cursor.id) ||
    (cursor.order !== 'newest' && cursor.order !== 'oldest') ||
    typeof cursor.filters !== 'object' ||
    cursor.filters === null ||
    Array.isArray(cursor.filters) ||
    Object.entries(cursor.filters).some(
      ([name, v]) => !Object.hasOwn(filterChecks, name) || typeof v !== 'string' || !filterChecks[name as 'action'](v),
    )
  )
    badCursor('is not a cursor of this list');
  return cursor as Cursor;
}

/** The page's query: the request's, or the cursor's, which the request may repeat but not contradict. */
function resolve(query: AuditQuery): { order: Order; filters: FilterValues; cursor?: Cursor } {
  const asked: FilterValues = {};
  for (const name of filterNames) if (query[name] !== undefined) (asked as Record<string, unknown>)[name] = query[name];
  if (query.cursor === undefined) return { order: query.order ?? 'newest', filters: asked };
  const cursor = decodeCursor(query.cursor);
  const contradicted = filterNames.filter((name) => asked[name] !== undefined && asked[name] !== cursor.filters[name]);
  if (query.order !== undefined && query.order !== cursor.order) contradicted.push('order' as never);
  if (contradicted.length > 0)
    badCursor(`was made for other values of ${contradicted.join(', ')}: leave them out or repeat the cursor's`);
  return { order: cursor.order, filters: cursor.filters, cursor };
}

export async function listAuditLog(
  db: DbOrTx,
  tenant: Tenant,
  query: AuditQuery,
): Promise<{
  entries: AuditEntry[];
  pagination: { limit: number; hasMore: boolean; nextCursor: string | null; previousCursor: string | null };
}> {
  const limit = query.limit ?? 50;
  const { order, filters, cursor } = resolve(query);
  const from = filters.from === undefined ? undefined : new Date(filters.from);
  const to = filters.to === undefined ? undefined : new Date(filters.to);
  if (from && to && to <= from)
    throw validationFailed([{ path: '/query/to', message: 'must be later than from', code: 'out_of_range' }]);
  const entryFilters: EntryFilters = {
    action: filters.action as AuditAction | undefined,
    actor: filters.actor,
    targetId: filters.targetId,
    from,
    to,
  };
  const forward = order === 'newest' ? 'desc' : 'asc';
  const backward = forward === 'desc' ? 'asc' : 'desc';
  const goingBack = cursor?.way === 'before';
  const rows = await listEntries(db, tenant, entryFilters, {
    direction: goingBack ? backward : forward,
    afterId: cursor?.id,
    limit,
  });
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  if (goingBack) page.reverse();
  const first = page[0];
  const last = page[page.length - 1];
  const at = (way: Cursor['way'], id: string) => encodeCursor({ way, id, order, filters });
  // Going on: more rows that way. Coming back: the page the cursor came from is still ahead.
  const hasMore = goingBack ? last !== undefined : more;
  const hasEarlier = goingBack ? more : cursor !== undefined;
  return {
    entries: page.map(toEntry),
    pagination: {
      limit,
      hasMore,
      nextCursor: hasMore && last ? at('after', last.id) : null,
      previousCursor: hasEarlier && first ? at('before', first.id) : null,
    },
  };
}
