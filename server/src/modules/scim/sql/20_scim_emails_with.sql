-- scim_emails_with: a SCIM user's addresses once the respondent's e-mail is p_email. Called by the respondents'
-- writer when an HR system changes an address (modules/respondents/scim-users.ts, followEmailChanges): the designated
-- address (scim_designated_email) takes the new value, or an address already listed becomes the primary one; no
-- e-mail empties the list; unchanged when the designated address is p_email already.
--
-- Applied after the migrations, as a whole, whenever this file changes (server/src/db/repeatable.ts; docs/decisions/
-- 0065-sql-owned-by-modules.md): keep every statement re-runnable. Dropping or renaming an object takes a migration.

create or replace function scim_emails_with(p_emails jsonb, p_email text) returns jsonb
language sql immutable parallel safe
as $$
-- The addresses once the respondent's writer set its e-mail to p_email (see the migration's comment); unchanged
-- when the designated address is p_email already.
with designated as (select scim_designated_email(p_emails) as at),
listed as (
  select min(i) as at from jsonb_array_elements(p_emails) with ordinality as e(v, i)
  where lower(e.v ->> 'value') = lower(p_email))
select case
  when p_email is null then '[]'::jsonb
  when listed.at = designated.at then
    jsonb_set(p_emails, array[(listed.at - 1)::text, 'value'], to_jsonb(p_email))
  when listed.at is not null then
    (select jsonb_agg(case when i = listed.at then e.v || jsonb_build_object('value', p_email, 'primary', true)
        else e.v || '{"primary": false}'::jsonb end order by i)
     from jsonb_array_elements(p_emails) with ordinality as e(v, i))
  when designated.at is null then
    jsonb_build_array(jsonb_build_object('value', p_email, 'type', 'work', 'primary', true))
  else jsonb_set(p_emails, array[(designated.at - 1)::text, 'value'], to_jsonb(p_email))
end
from designated, listed
$$;
