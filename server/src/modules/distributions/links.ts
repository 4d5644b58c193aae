/**
 * What a link's token opens, for the respondent pages (the respondent-pages module): a personal token its recipient
 * and their distribution, an embed token its distribution. The pages get rows, never the token scheme (tokens.ts)
 * nor the queries.
 */
import type { DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import * as repo from './repository.js';
import type { DistributionRow, RecipientRow } from './repository.js';
import { parseToken } from './tokens.js';

export type LinkTarget =
  | {
      kind: 'personal';
      tenant: Tenant;
      /** What the response records as the link it came through (surveys' `storeResponse`). */
      tokenHash: Buffer;
      recipient: RecipientRow;
      distribution: DistributionRow;
    }
  | { kind: 'embed'; tenant: Tenant; distribution: DistributionRow };

/** What `token` opens; undefined when it is not a token, or no recipient nor distribution holds it. */
export async function openLink(db: DbOrTx, token: string): Promise<LinkTarget | undefined> {
  const parsed = parseToken(token);
  if (!parsed) return undefined;
  const { tenant, hash } = parsed;
  const recipient = await repo.findRecipientByToken(db, tenant, hash);
  const distribution = recipient
    ? await repo.findDistribution(db, tenant, recipient.distribution_id)
    : await repo.findDistributionByEmbedToken(db, tenant, hash);
  if (!distribution) return undefined;
  return recipient
    ? { kind: 'personal', tenant, tokenHash: hash, recipient, distribution }
    : { kind: 'embed', tenant, distribution };
}
