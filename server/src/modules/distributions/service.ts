/**
 * The rules of distributions: what may be distributed and when, the 202 that stores the request and enqueues
 * its send in one transaction, the preview (the same compiled targeting as the send), and the mapping of rows
 * to the contract's objects.
 */
import type {
  AudiencePreview,
  Distribution,
  DistributionRecipient,
  DistributionRequest,
} from '../../generated/openapi.js';
import type { Config } from '../../config.js';
import { sql } from 'kysely';
import type { Db, DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { tenantIs, tenantOfRow } from '../../db/tenant.js';
import { idOrNotFound, invalidState, notFound, validationFailed, type ErrorDetail } from '../../http/index.js';
import type { Dependencies } from '../../dependencies.js';
import { newId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import { activeRespondent, toProfile } from '../respondents/index.js';
import * as surveys from '../surveys/index.js';
import { checkTargeting, compileChecked, respondentsOf, type CheckedTargeting } from '../targeting/index.js';
import { distributionQueue, type DistributionJobData } from './queue.js';
import * as repo from './repository.js';
import type { DistributionRow, RecipientRow, StatusCounts } from './repository.js';
import { accessCode, randomPrefix } from './access-codes.js';
import { embedToken, linkKeyOf, personalToken, type LinkKey } from './tokens.js';

export type { Distribution, DistributionRecipient };

const MAX_SCHEDULE_AHEAD_MS = 366 * 24 * 3600 * 1000;
const DEFAULT_LINK_DAYS = 60;
const DEFAULT_REMINDER_DAYS = 3;

/** Where links point: PUBLIC_BASE_URL, or the address this service listens on. */
export function baseUrlOf(config: Pick<Config, 'publicBaseUrl' | 'host' | 'port'>): string {
  return (
    config.publicBaseUrl ?? `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`
  ).replace(/\/+$/, '');
}

export const answerUrl = (config: Pick<Config, 'publicBaseUrl' | 'host' | 'port'>, token: string) =>
  `${baseUrlOf(config)}/s/${token}`;
export const unsubscribeUrl = (config: Pick<Config, 'publicBaseUrl' | 'host' | 'port'>, token: string) =>
  `${baseUrlOf(config)}/u/${token}`;
/** Where people type a kiosk code (respondent-pages' kiosk-page.ts). */
export const kioskUrl = (config: Pick<Config, 'publicBaseUrl' | 'host' | 'port'>) => `${baseUrlOf(config)}/k`;

/** A kiosk recipient's access code as printed; null for other methods. */
export function accessCodeOf(key: LinkKey, distribution: DistributionRow, row: RecipientRow): string | null {
  if (distribution.method !== 'kiosk' || distribution.kiosk_prefix === null) return null;
  return accessCode(key, distribution.kiosk_prefix, distribution.id, row.external_id, row.access_code_round);
}

export function embedCodeOf(config: Config, key: LinkKey, tenant: Tenant, row: DistributionRow): string | null {
  if (row.method !== 'embed' || row.embed_token_hash === null) return null;
  const src = answerUrl(config, embedToken(key, tenant, row.id));
  return `<iframe src="${src}" title="Survey" width="100%" height="760" style="border:0;max-width:720px" loading="lazy"></iframe>`;
}

/** Counts: the stored totals once sending has ended, live from the recipients while it runs. */
export function countsOf(row: DistributionRow, live?: StatusCounts) {
  if (!live)
    return {
      sentCount: row.sent_count,
      failedCount: row.failed_count,
      unsubscribedCount: row.unsubscribed_count,
      noEmailCount: row.no_email_count,
    };
  return {
    sentCount: (live.sent ?? 0) + (live.responded ?? 0),
    failedCount: (live.failed ?? 0) + (live.bounced ?? 0),
    unsubscribedCount: live.unsubscribed ?? 0,
    noEmailCount: live.no_email ?? 0,
  };
}

export function toDistribution(row: DistributionRow, config: Config, key: LinkKey, live?: StatusCounts): Distribution {
  const tenant = tenantOfRow(row);
  return {
    id: row.id,
    surveyId: row.survey_id,
    status: row.status,
    method: row.method,
    targeting: row.targeting as Distribution['targeting'],
    schedule: iso(row.schedule),
    reminder: { enabled: row.reminder_enabled, afterDays: row.reminder_after_days },
    subject: row.subject,
    message: row.message,
    linkExpiresInDays: row.link_expires_in_days,
    matchedCount: row.matched_count,
    ...countsOf(row, live),
    reminderSentAt: iso(row.reminder_sent_at),
    embedCode: embedCodeOf(config, key, tenant, row),
    embedOrigins: row.embed_origins,
    createdAt: iso(row.created_at),
    completedAt: iso(row.completed_at),
  };
}

export function toRecipient(
  row: RecipientRow,
  distribution: DistributionRow,
  config: Config,
  key: LinkKey,
): DistributionRecipient {
  const tenant = tenantOfRow(row);
  return {
    respondentExternalId: row.external_id,
    email: row.email,
    // The contract's name (a wire field, kept) for the person as the audience was frozen at the send.
    snapshot: toProfile(row),
    link: answerUrl(config, personalToken(key, tenant, row.distribution_id, row.external_id)),
    status: row.status,
    expiresAt: iso(
      distribution.expires_at ??
        new Date(distribution.schedule.getTime() + distribution.link_expires_in_days * 86_400_000),
    ),
    sentAt: iso(row.sent_at),
    respondedAt: iso(row.responded_at),
    reminderSentAt: iso(row.reminder_sent_at),
    error: row.error,
    accessCode: accessCodeOf(key, distribution, row),
  };
}

function checkedOrThrow(targeting: unknown): CheckedTargeting {
  const checked = checkTargeting(targeting, '/body/targeting');
  if (!checked.ok) throw validationFailed(checked.problems);
  return checked.targeting;
}

/** A distribution with live counts while it sends. */
export async function presentDistribution(
  db: DbOrTx,
  config: Config,
  tenant: Tenant,
  row: DistributionRow,
): Promise<Distribution> {
  const key = await linkKeyOf(db, config.linkSecret);
  const live = row.status === 'sending' ? await repo.recipientCounts(db, tenant, row.id) : undefined;
  return toDistribution(row, config, key, live);
}

export async function distributeSurvey(
  deps: Pick<Dependencies, 'db' | 'boss' | 'config'>,
  tenant: Tenant,
  surveyId: string,
  body: DistributionRequest,
): Promise<Distribution> {
  const targeting = checkedOrThrow(body.targeting);
  const settings = body.distribution;
  const problems: ErrorDetail[] = [];
  const now = new Date();
  const requested = settings.schedule === undefined ? undefined : new Date(settings.schedule);
  if (requested && requested.getTime() - now.getTime() > MAX_SCHEDULE_AHEAD_MS) {
    problems.push({
      path: '/body/distribution/schedule',
      code: 'maximum',
      message: 'schedule may be at most one year ahead',
    });
  }
  if (settings.reminder?.enabled && settings.method !== 'email') {
    problems.push({
      path: '/body/distribution/reminder/enabled',
      code: 'invalid_value',
      message: `reminders are e-mailed: method ${settings.method} sends no e-mail, so it cannot have a reminder`,
    });
  }
  if (settings.embedOrigins !== undefined && settings.method !== 'embed') {
    problems.push({
      path: '/body/distribution/embedOrigins',
      code: 'invalid_value',
      message: `only an embed can be framed: method ${settings.method} takes no embedOrigins`,
    });
  }
  if (problems.length > 0) throw validationFailed(problems);
  const future = requested !== undefined && requested > now;
  const schedule = future ? requested : now;

  const id = newId('dst');
  const row = await deps.db.transaction().execute(async (tx) => {
    // Claimed with the distribution: a rolled-back request leaves its prefix free.
    const kioskPrefix = settings.method === 'kiosk' ? await claimPrefix(tx, tenant, id) : null;
    // Shares the survey's row lock with launch/pause/close, so the state checked here is the state at commit.
    const survey = await surveys.findSurvey(tx, tenant, surveyId, { forUpdate: true });
    if (!survey) throw notFound('survey', surveyId);
    if (survey.status === 'closed')
      throw invalidState(`Survey ${surveyId} is closed; a closed survey cannot be distributed.`);
    if (survey.status !== 'active' && !future) {
      throw invalidState(
        `Survey ${surveyId} is ${survey.status}; distribute an active survey, or give a future distribution.schedule and launch the survey by then.`,
      );
    }
    const inserted = await repo.insertDistribution(tx, tenant, {
      id,
      survey_id: surveyId,
      status: 'scheduled',
      method: settings.method,
      targeting: { filters: body.targeting.filters, logic: targeting.logic },
      schedule,
      reminder_enabled: settings.reminder?.enabled ?? false,
      reminder_after_days: settings.reminder?.afterDays ?? DEFAULT_REMINDER_DAYS,
      subject: settings.method === 'email' ? (settings.subject ?? survey.title.slice(0, 200)) : null,
      message: settings.method === 'email' ? (settings.message ?? null) : null,
      link_expires_in_days: settings.linkExpiresInDays ?? DEFAULT_LINK_DAYS,
      embed_origins: settings.embedOrigins ?? [],
      kiosk_prefix: kioskPrefix,
    });
    const data: DistributionJobData = {
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      distributionId: inserted.id,
      kind: 'send',
    };
    await distributionQueue.send(deps.boss, tx, data, future ? { startAfter: schedule } : {});
    return inserted;
  });
  return presentDistribution(deps.db, deps.config, tenant, row);
}

/** Tries to draw a prefix nobody has: 20 bits, so a clash stays rare until hundreds of thousands are drawn. */
const PREFIX_DRAWS = 20;

async function claimPrefix(db: DbOrTx, tenant: Tenant, distributionId: string): Promise<string> {
  for (let draw = 0; draw < PREFIX_DRAWS; draw++) {
    const prefix = randomPrefix();
    if (await repo.claimKioskPrefix(db, tenant, prefix, distributionId)) return prefix;
  }
  throw new Error(`no free kiosk code prefix after ${PREFIX_DRAWS} draws`);
}

export async function previewDistribution(
  db: Db,
  tenant: Tenant,
  surveyId: string,
  targetingInput: unknown,
): Promise<AudiencePreview> {
  const targeting = checkedOrThrow(targetingInput);
  if (!(await surveys.findSurvey(db, tenant, surveyId))) throw notFound('survey', surveyId);
  const matching = db
    .selectFrom('respondents')
    .where(tenantIs(tenant))
    .where(compileChecked(targeting, respondentsOf(tenant)))
    // Inactive SCIM users are kept, but reached by no distribution.
    .where(activeRespondent('respondents'));
  // The count and the sample in one statement: the audience is found once (a recursive walk for `under`), not
  // once per query. No row means none matched.
  const sample = await matching
    .select(['external_id', 'email', 'first_name', 'last_name', 'department', 'location', 'job_title'])
    .select(sql<string>`count(*) over ()`.as('matched'))
    .orderBy('external_id')
    .limit(10)
    .execute();
  return {
    matchedCount: Number(sample[0]?.matched ?? 0),
    sample: sample.map((r) => ({
      externalId: r.external_id,
      email: r.email,
      firstName: r.first_name,
      lastName: r.last_name,
      department: r.department,
      location: r.location,
      jobTitle: r.job_title,
    })),
  };
}

export async function findDistributionOrThrow(
  db: DbOrTx,
  tenant: Tenant,
  surveyId: string,
  distributionId: string,
): Promise<DistributionRow> {
  const row = await repo.findDistribution(db, tenant, distributionId);
  // Another survey's distribution is answered like an unknown one.
  if (!row || row.survey_id !== surveyId) throw notFound('distribution', distributionId);
  return row;
}

type RecipientFilter = Parameters<typeof repo.listRecipients>[3];

/** The surveys module's id check, for the handlers of this module. */
export const surveyIdOrThrow = surveys.surveyIdOrThrow;
export const distributionIdOrThrow = (id: string) => idOrNotFound('dst', 'distribution', id);

export async function listDistributions(
  db: DbOrTx,
  config: Config,
  tenant: Tenant,
  surveyIdParam: string,
  page: { limit: number; offset: number },
): Promise<{ distributions: Distribution[]; total: number }> {
  const surveyId = surveyIdOrThrow(surveyIdParam);
  if (!(await surveys.findSurvey(db, tenant, surveyId))) throw notFound('survey', surveyId);
  const { rows, total } = await repo.listDistributions(db, tenant, surveyId, page);
  const distributions = await Promise.all(rows.map((row) => presentDistribution(db, config, tenant, row)));
  return { distributions, total };
}

export async function getDistribution(
  db: DbOrTx,
  config: Config,
  tenant: Tenant,
  surveyId: string,
  distributionId: string,
): Promise<Distribution> {
  const row = await findDistributionOrThrow(
    db,
    tenant,
    surveyIdOrThrow(surveyId),
    distributionIdOrThrow(distributionId),
  );
  return presentDistribution(db, config, tenant, row);
}

export async function listRecipients(
  db: DbOrTx,
  config: Config,
  tenant: Tenant,
  ids: { surveyId: string; distributionId: string },
  filter: RecipientFilter,
): Promise<{ recipients: DistributionRecipient[]; total: number }> {
  const distribution = await findDistributionOrThrow(
    db,
    tenant,
    surveyIdOrThrow(ids.surveyId),
    distributionIdOrThrow(ids.distributionId),
  );
  const { rows, total } = await repo.listRecipients(db, tenant, distribution.id, filter);
  const key = await linkKeyOf(db, config.linkSecret);
  return { recipients: rows.map((row) => toRecipient(row, distribution, config, key)), total };
}
