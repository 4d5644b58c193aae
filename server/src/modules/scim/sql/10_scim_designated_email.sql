-- scim_designated_email: of a SCIM user's addresses (`scim_users.emails`), the position of the one the respondent keeps
-- in `respondents.email`. modules/scim/user.ts designatedEmail decides the same in TypeScript; called by
-- scim_emails_with (20_scim_emails_with.sql).
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function scim_designated_email(p_emails jsonb) returns int
language sql immutable parallel safe
as $$
-- The position (from 1) of the address the respondent keeps: the primary one, else the first of type work
-- (any case), else the first; null for no address. modules/scim/user.ts designatedEmail decides the same.
select coalesce(
  (select min(i) from jsonb_array_elements(p_emails) with ordinality as e(v, i) where e.v -> 'primary' = 'true'),
  (select min(i) from jsonb_array_elements(p_emails) with ordinality as e(v, i) where lower(e.v ->> 'type') = 'work'),
  case when jsonb_array_length(p_emails) > 0 then 1 end)::int
$$;
