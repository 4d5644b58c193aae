/**
 * Types for what the SDK sends where the document must stay loose. A sync's records are checked one by one by the
 * service (so one bad record never fails the whole request) and the document types them `unknown`; analytics
 * `filters` is a JSON string in the query; `segmentBy` accepts `attributes.<name>`, which the generator widens to
 * `string`. Typed here, a typo in a field name fails at compile time instead of as a record error or a 400.
 */
import type { components } from './generated/openapi.js';
import type { QueryOf } from './resources-runtime.js';

type Schemas = components['schemas'];

/**
 * One record of a respondent sync: the body of `PUT /api/v1/respondents/{externalId}` (`RespondentUpsert`) with
 * `externalId` required, exactly as the service validates each record.
 */
export interface SyncRecord extends Omit<Schemas['RespondentUpsert'], 'externalId'> {
  /** The respondent's id in your system; the key the sync matches on. */
  externalId: string;
}

/** The body of `client.respondents.sync`: `SyncRequest` with typed records. */
export type SyncBody = Omit<Schemas['SyncRequest'], 'respondents'> & {
  /** 1 to 100,000 records. */
  respondents: readonly SyncRecord[];
};

/** A respondent field that analytics break results down by (`tenure`: bands of the time since `hireDate`). */
export type SegmentField = 'department' | 'location' | 'jobTitle' | 'employmentType' | 'managerId' | 'tenure';

/**
 * What `analytics.static` and `analytics.smart` break results down by: a respondent field, a custom attribute as
 * `attributes.<name>`, or `managerTree` (with `manager`).
 */
export type AnalyticsSegmentBy = SegmentField | `attributes.${string}` | 'managerTree';

/** A targeting condition as analytics take it: every operator but `under` (use `segmentBy: 'managerTree'`). */
export type AnalyticsFilter = Omit<Schemas['TargetingFilter'], 'operator' | 'value'> & {
  operator: Exclude<Schemas['TargetingFilter']['operator'], 'under'>;
  /** Read-only arrays too, so that filters declared `as const` fit. */
  value: Schemas['TargetingFilter']['value'] | readonly (string | number)[];
};

/** Analytics `filters` as an object, the targeting language of distributions; the SDK sends it as JSON. */
export interface AnalyticsFilters {
  filters: readonly AnalyticsFilter[];
  /** `AND` (the default): every filter must match; `OR`: any. */
  logic?: 'AND' | 'OR';
}

type AnalyticsQuery<Path extends '/api/v1/surveys/{id}/analytics/static' | '/api/v1/surveys/{id}/analytics/smart'> =
  Omit<QueryOf<Path, 'get'>, 'filters' | 'segmentBy'> & {
    /** Only respondents matching these conditions: the object, or its JSON text as the query carries it. */
    filters?: AnalyticsFilters | string;
    segmentBy?: AnalyticsSegmentBy;
  };

/** The query of `client.analytics.static`. */
export type StaticAnalyticsQuery = AnalyticsQuery<'/api/v1/surveys/{id}/analytics/static'>;
/** The query of `client.analytics.smart`. */
export type SmartAnalyticsQuery = AnalyticsQuery<'/api/v1/surveys/{id}/analytics/smart'>;

/** The query as the document types it: `filters` given as an object is sent as its JSON text. */
export function analyticsQuery<Query extends { filters?: AnalyticsFilters | string }>(
  query: Query | undefined,
): (Omit<Query, 'filters'> & { filters?: string }) | undefined {
  if (query?.filters === undefined || typeof query.filters === 'string')
    return query as Omit<Query, 'filters'> & { filters?: string };
  return { ...query, filters: JSON.stringify(query.filters) };
}
