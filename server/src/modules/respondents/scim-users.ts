/**
 * Each respondent's SCIM user (`scim_users`), kept by the respondents' one writer (repository.ts): every respondent
 * is a SCIM user, however the service wrote it (a PUT, a sync), so that an identity provider switched on later finds
 * the people an HR system created. SCIM itself writes the user of a respondent it creates or changes (its own
 * attributes), and tells the writer so.
 *
 * Set-based, a few statements per write: row triggers did this first, and on Citus each of their statements, run
 * for every row, went through the distributed planner (a sync of 20,000 people took 6× as long).
 */
import { sql } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import { tenantIs, type Tenant } from '../../db/tenant.js';
import { newId } from '../../lib/ids.js';

export interface NewRespondent {
  externalId: string;
  email: string | null;
}

/**
 * The users of respondents just created. userName is the e-mail address, else (the address is another user's
 * userName, case-insensitively) the externalId, else the user's own id; the user's one address is the respondent's,
 * of type work and primary, or none. Each pass takes the names still free (`on conflict do nothing` also settles two
 * new people sharing an address: the first keeps it as its name). A respondent that has its user already (SCIM wrote
 * it) is left alone: every pass skips it.
 *
 * A name inserted by another open transaction would make this one wait for it. The callers see to it that none is
 * open: every writer of a tenant's respondents takes the hierarchy's lock, and the parallel batches of a sync call
 * this only in their commit turn (`ManagerEdgesTurn.beforeCommit`), one after the other.
 */
export async function giveUsersTo(db: DbOrTx, tenant: Tenant, created: readonly NewRespondent[]): Promise<void> {
  const names = [
    (r: NewRespondent) => r.email ?? r.externalId,
    (r: NewRespondent) => r.externalId,
    (_: NewRespondent, id: string) => id,
  ];
  let pending = created;
  for (const nameOf of names) {
    if (pending.length === 0) return;
    const ids = pending.map(() => newId('usr'));
    const { rows } = await sql<{ external_id: string }>`
      insert into scim_users (organization_id, environment, id, external_id, user_name, emails)
      select ${tenant.organizationId}, ${tenant.environment}, u.id, u.external_id, u.user_name,
        case when u.email is null then '[]'::jsonb
          else jsonb_build_array(jsonb_build_object('value', u.email, 'type', 'work', 'primary', true)) end
      from unnest(${ids}::text[], ${pending.map((r) => r.externalId)}::text[],
        ${pending.map((r, i) => nameOf(r, ids[i]!))}::text[], ${pending.map((r) => r.email)}::text[])
        as u(id, external_id, user_name, email)
      on conflict do nothing
      returning external_id`.execute(db);
    const done = new Set(rows.map((row) => row.external_id));
    pending = pending.filter((r) => !done.has(r.externalId));
  }
}

/**
 * After an HR system changed respondents (`externalIds`, updated rows): each user's addresses as the respondent's
 * e-mail now is (`scim_emails_with`, modules/scim/sql/20_scim_emails_with.sql): the designated address takes the new
 * value, or an address already listed becomes the primary one; no e-mail empties the list. Unchanged users are not
 * written.
 */
export async function followEmailChanges(db: DbOrTx, tenant: Tenant, externalIds: readonly string[]): Promise<void> {
  if (externalIds.length === 0) return;
  await sql`
    update scim_users s set emails = scim_emails_with(s.emails, r.email)
    from respondents r
    where ${tenantIs(tenant, 's')} and s.external_id = any(${[...externalIds]}::text[])
      and ${tenantIs(tenant, 'r')} and r.external_id = s.external_id
      and s.emails is distinct from scim_emails_with(s.emails, r.email)`.execute(db);
}

/** The users of respondents being deleted: `which`, a condition on `external_id` (the respondents' own). */
export async function removeUsersOf(db: DbOrTx, tenant: Tenant, which: ReturnType<typeof sql>): Promise<void> {
  await sql`delete from scim_users where ${tenantIs(tenant)} and ${which}`.execute(db);
}
