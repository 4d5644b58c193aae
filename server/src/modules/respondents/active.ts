/** Whether a respondent is active: what the respondents module says, for whoever picks people (distributions). */
import { sql, type RawBuilder, type SqlBool } from 'kysely';

/**
 * The condition distributions add where they pick respondents: active unless their SCIM user says otherwise
 * (`active: false`, set by an identity provider; a respondent written by PUT or a sync is active).
 * `alias` names the table whose rows carry the respondent's tenant and `external_id`.
 */
export function activeRespondent(alias: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`not exists (select 1 from scim_users inactive
    where inactive.organization_id = ${sql.ref(`${alias}.organization_id`)}
      and inactive.environment = ${sql.ref(`${alias}.environment`)}
      and inactive.external_id = ${sql.ref(`${alias}.external_id`)} and not inactive.active)`;
}
