/**
 * Personal and embed tokens. A token is `<organization (26)><environment L|T><MAC (43, base64url)>`: the MAC
 * is HMAC-SHA256 over the recipient (`<distributionId>:<externalId>`, or `embed:<distributionId>`) under a
 * key derived from LINK_SECRET — 256 unguessable bits. Only SHA-256 of the MAC is stored, so a copy of the
 * database cannot answer in anyone's name, yet `listDistributionRecipients` can show the links again (it
 * recomputes them). The organization and environment in the token route the lookup to the tenant's rows.
 *
 * At the send, the query that freezes the audience computes the same HMAC inside PostgreSQL (built-in `sha256`),
 * so 100,000 recipients get their token hashes in one INSERT … SELECT; `hmacSql` and `macOf` must agree (tested).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { sql, type Expression, type RawBuilder } from 'kysely';
import type { DbOrTx } from '../../db/database.js';
import type { Environment } from '../../db/columns.js';
import type { Tenant } from '../../db/tenant.js';

export interface LinkKey {
  /** The HMAC key: SHA-256 of the configured secret (32 bytes). */
  key: Buffer;
}

export function linkKeyFrom(secret: string | Buffer): LinkKey {
  return { key: createHash('sha256').update(secret).digest() };
}

const keys = new WeakMap<object, Promise<LinkKey>>();

/** The configured key, or the database's random one (created on first use), read once per database handle. */
export function linkKeyOf(db: DbOrTx, configured: string | undefined): Promise<LinkKey> {
  if (configured) return Promise.resolve(linkKeyFrom(configured));
  let key = keys.get(db);
  if (!key) {
    key = (async () => {
      await db
        .insertInto('link_secrets')
        .values({ id: 1, secret: randomBytes(32) })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      const row = await db.selectFrom('link_secrets').select('secret').where('id', '=', 1).executeTakeFirstOrThrow();
      return linkKeyFrom(row.secret);
    })();
    key.catch(() => keys.delete(db));
    keys.set(db, key);
  }
  return key;
}

const personalMessage = (distributionId: string, externalId: string) => `${distributionId}:${externalId}`;
const embedMessage = (distributionId: string) => `embed:${distributionId}`;

export function macOf(key: LinkKey, message: string | Buffer): Buffer {
  const hmac = createHmac('sha256', key.key);
  return (typeof message === 'string' ? hmac.update(message, 'utf8') : hmac.update(message)).digest();
}

export const hashMac = (mac: Buffer): Buffer => createHash('sha256').update(mac).digest();

function tokenOf(tenant: Tenant, mac: Buffer): string {
  return `${tenant.organizationId.slice(4)}${tenant.environment === 'LIVE' ? 'L' : 'T'}${mac.toString('base64url')}`;
}

export function personalToken(key: LinkKey, tenant: Tenant, distributionId: string, externalId: string): string {
  return tokenOf(tenant, macOf(key, personalMessage(distributionId, externalId)));
}

export function embedToken(key: LinkKey, tenant: Tenant, distributionId: string): string {
  return tokenOf(tenant, macOf(key, embedMessage(distributionId)));
}

export function embedTokenHash(key: LinkKey, distributionId: string): Buffer {
  return hashMac(macOf(key, embedMessage(distributionId)));
}

export interface ParsedToken {
  tenant: Tenant;
  /** SHA-256 of the MAC: what the database stores. */
  hash: Buffer;
}

const tokenPattern = /^([0-9A-HJKMNP-TV-Z]{26})([LT])([A-Za-z0-9_-]{43})$/;

/** The tenant and stored hash a token refers to; undefined when it is not a token at all. */
export function parseToken(token: string): ParsedToken | undefined {
  const match = tokenPattern.exec(token);
  if (!match) return undefined;
  const mac = Buffer.from(match[3]!, 'base64url');
  // 43 characters carry 258 bits for a 256-bit MAC: the last one's two low bits are ignored by the decoder, so
  // four spellings would decode to the same MAC. Only the canonical one (what tokenOf writes) is a token.
  if (mac.toString('base64url') !== match[3]) return undefined;
  const environment: Environment = match[2] === 'L' ? 'LIVE' : 'TEST';
  return { tenant: { organizationId: `org_${match[1]}`, environment }, hash: hashMac(mac) };
}

/**
 * SQL for SHA-256(HMAC-SHA256(key, `<distributionId>:<external_id column>`)), the stored token hash. HMAC
 * written out (RFC 2104) with PostgreSQL's sha256(): the padded keys are bind parameters.
 */
export function tokenHashSql(
  key: LinkKey,
  distributionId: string,
  externalIdColumn: Expression<unknown>,
): RawBuilder<Buffer> {
  const message = sql`convert_to(${`${distributionId}:`} || ${externalIdColumn}, 'UTF8')`;
  return sql<Buffer>`sha256(${hmacSql(key, message)})`;
}

/** SQL for HMAC-SHA256(key, message), `message` a bytea expression: `macOf` in PostgreSQL. */
export function hmacSql(key: LinkKey, message: Expression<unknown>): RawBuilder<Buffer> {
  const block = Buffer.alloc(64);
  key.key.copy(block);
  const inner = Buffer.from(block.map((b) => b ^ 0x36));
  const outer = Buffer.from(block.map((b) => b ^ 0x5c));
  return sql<Buffer>`sha256(${outer}::bytea || sha256(${inner}::bytea || ${message}))`;
}

/** Hash of the personal token of one recipient, computed in JS (the answer page, tests). */
export function personalTokenHash(key: LinkKey, distributionId: string, externalId: string): Buffer {
  return hashMac(macOf(key, personalMessage(distributionId, externalId)));
}
