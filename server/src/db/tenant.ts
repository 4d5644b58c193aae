/**
 * The tenant: whose data a query may touch.
 */
import type { Environment } from './columns.js';

/** Whose data a query may touch: every query that serves a caller is scoped by both. */
export interface Tenant {
  organizationId: string;
  environment: Environment;
}
