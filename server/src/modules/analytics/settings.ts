/** The analytics settings of an organization's environment: its anonymity threshold. */
import type { AnalyticsSettings, AnalyticsSettingsUpdate } from '../../generated/openapi.js';
import type { Db } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { iso } from '../../lib/time.js';
import * as repository from './repository.js';

export async function getSettings(db: Db, tenant: Tenant): Promise<AnalyticsSettings> {
  const { threshold, updatedAt } = await repository.findThreshold(db, tenant);
  return { anonymityThreshold: threshold, updatedAt: updatedAt === null ? null : iso(updatedAt) };
}

export async function updateSettings(
  db: Db,
  tenant: Tenant,
  body: AnalyticsSettingsUpdate,
): Promise<AnalyticsSettings> {
  if (body.anonymityThreshold === undefined) return getSettings(db, tenant);
  const saved = await repository.saveThreshold(db, tenant, body.anonymityThreshold);
  return { anonymityThreshold: saved.threshold, updatedAt: iso(saved.updatedAt) };
}
