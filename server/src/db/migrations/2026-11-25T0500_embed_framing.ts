/**
 * Embeds: who may frame them, and no embed token at rest in the event log. Frozen: later changes go into new files.
 *
 * 1. `distributions.embed_origins`: the web origins allowed to frame a distribution's answer pages (its
 *    `embedOrigins`, method `embed`). Existing distributions get none: a page framed until now by any site is
 *    framed by none until its organization lists its origins, the safe reading of "not asked".
 * 2. The `distribution.sent` events recorded so far carry the embed token inside `embedCode`; the token is a
 *    credential that the API shows only on the distribution itself. Blank it in place (`null`, as new events
 *    record it), so the log and every delivery built from it stop holding it.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table distributions add column embed_origins text[] not null default '{}'`.execute(db);
  await sql`
    update events set data = jsonb_set(data, '{embedCode}', 'null'::jsonb)
    where type = 'distribution.sent' and jsonb_typeof(data -> 'embedCode') = 'string'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // The blanked tokens are not restored: they were never needed there.
  await sql`alter table distributions drop column embed_origins`.execute(db);
}
