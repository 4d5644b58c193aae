/**
 * The type rules of targeting filters (documented in the contract's TargetingFilter): which operator fits
 * which field, and which `value` each needs. Every problem is reported, each naming its filter by index, at
 * a JSON pointer under `basePath`. Pure, so the rules are tested on their own.
 */
import type { DistributionTargeting as Targeting, TargetingFilter } from '../../generated/openapi.js';
import type { ErrorDetail } from '../../http/index.js';
import { employmentTypes, isCalendarDate, resolveField, type FieldRef } from './fields.js';

export type { Targeting, TargetingFilter };

export type Operator = TargetingFilter['operator'];
type Scalar = string | number | boolean;

/** A filter whose field, operator and value fit together (the compiler's input). */
export type CheckedFilter =
  | { field: FieldRef; operator: 'equals'; value: Scalar }
  | { field: FieldRef; operator: 'in'; value: Array<string | number> }
  | { field: FieldRef; operator: 'contains'; value: string }
  | { field: FieldRef; operator: 'gte' | 'lte'; value: string | number }
  | { field: FieldRef; operator: 'exists'; value: boolean }
  /** Everyone whose chain of managers contains the respondent `value` (field `managerId` only). */
  | { field: FieldRef; operator: 'under'; value: string };

export interface CheckedTargeting {
  filters: CheckedFilter[];
  logic: 'AND' | 'OR';
}

export const MAX_FILTERS = 50;
export const MAX_IN_VALUES = 100;
export const MAX_STRING_LENGTH = 1000;
const operators: readonly string[] = ['equals', 'in', 'contains', 'gte', 'lte', 'exists', 'under'];

const describe = (value: unknown): string =>
  Array.isArray(value)
    ? 'an array'
    : value === null
      ? 'null'
      : typeof value === 'string'
        ? 'a string'
        : `a ${typeof value}`;

/** Checks one scalar against the field (`at` is the pointer of the value or array element). */
function checkScalar(
  i: number,
  ref: FieldRef,
  value: unknown,
  at: string,
  allowBoolean: boolean,
): ErrorDetail | undefined {
  const name = ref.type === 'column' ? ref.field : `attributes.${ref.name}`;
  if (ref.type === 'attribute') {
    if (typeof value === 'string') {
      return value.length > MAX_STRING_LENGTH
        ? {
            path: at,
            code: 'maximum',
            message: `filter ${i}: a value may have at most ${MAX_STRING_LENGTH} characters`,
          }
        : undefined;
    }
    if (typeof value === 'number' && Number.isFinite(value)) return undefined;
    if (typeof value === 'boolean' && allowBoolean) return undefined;
    return {
      path: at,
      code: 'type',
      message: `filter ${i}: ${name} needs ${allowBoolean ? 'a string, number or boolean' : 'a string or number'}, got ${describe(value)}`,
    };
  }
  if (typeof value !== 'string') {
    return {
      path: at,
      code: 'type',
      message: `filter ${i}: ${name} is ${ref.info.kind === 'date' ? 'a date' : 'text'} and needs a string value, got ${describe(value)}`,
    };
  }
  if (value.length > MAX_STRING_LENGTH)
    return {
      path: at,
      code: 'maximum',
      message: `filter ${i}: a value may have at most ${MAX_STRING_LENGTH} characters`,
    };
  if (ref.info.kind === 'date' && !isCalendarDate(value)) {
    return {
      path: at,
      code: 'format',
      message: `filter ${i}: ${name} is a date and needs a value of the form YYYY-MM-DD (an existing day), got "${value.length > 80 ? `${value.slice(0, 80)}…` : value}"`,
    };
  }
  return undefined;
}

function checkFilter(i: number, filter: unknown, base: string): { problems: ErrorDetail[]; checked?: CheckedFilter } {
  const at = `${base}/${i}`;
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
    return {
      problems: [{ path: at, code: 'type', message: `filter ${i} must be an object with field, operator and value` }],
    };
  }
  const { field, operator, value } = filter as Record<string, unknown>;
  const problems: ErrorDetail[] = [];
  const ref = typeof field === 'string' ? resolveField(field) : undefined;
  if (!ref) {
    problems.push({
      path: `${at}/field`,
      code: typeof field === 'string' ? 'invalid_value' : 'required',
      message: `filter ${i}: ${typeof field === 'string' ? `unknown field "${field.slice(0, 80)}"` : 'field is required'}; use a respondent field (externalId, email, firstName, lastName, department, location, jobTitle, managerId, hireDate, employmentType, language) or attributes.<name>`,
    });
  }
  if (typeof operator !== 'string' || !operators.includes(operator)) {
    problems.push({
      path: `${at}/operator`,
      code: 'enum',
      message: `filter ${i}: operator must be one of ${operators.join(', ')}`,
    });
  }
  if (value === undefined)
    problems.push({ path: `${at}/value`, code: 'required', message: `filter ${i}: value is required` });
  if (problems.length > 0 || !ref) return { problems };
  const name = field as string;
  const valueAt = `${at}/value`;
  const op = operator as Operator;

  switch (op) {
    case 'under': {
      if (ref.type !== 'column' || ref.field !== 'managerId') {
        return {
          problems: [
            {
              path: `${at}/operator`,
              code: 'invalid_value',
              message: `filter ${i}: under only fits managerId (everyone under a manager, at any depth), not ${name}`,
            },
          ],
        };
      }
      if (typeof value !== 'string' || value.length === 0 || value.length > 255) {
        return {
          problems: [
            {
              path: valueAt,
              code: typeof value === 'string' ? (value.length === 0 ? 'minimum' : 'maximum') : 'type',
              message: `filter ${i}: under needs the externalId of a manager, a string of 1 to 255 characters, got ${typeof value === 'string' ? `${value.length} characters` : describe(value)}`,
            },
          ],
        };
      }
      return { problems, checked: { field: ref, operator: op, value } };
    }
    case 'exists':
      if (typeof value !== 'boolean')
        return {
          problems: [
            { path: valueAt, code: 'type', message: `filter ${i}: exists needs true or false, got ${describe(value)}` },
          ],
        };
      return { problems, checked: { field: ref, operator: op, value } };
    case 'contains':
      if (ref.type === 'column' && ref.info.kind === 'date') {
        return {
          problems: [
            {
              path: `${at}/operator`,
              code: 'invalid_value',
              message: `filter ${i}: contains does not fit ${name}, a date; use equals, in, gte, lte or exists`,
            },
          ],
        };
      }
      if (typeof value !== 'string')
        return {
          problems: [
            { path: valueAt, code: 'type', message: `filter ${i}: contains needs a string, got ${describe(value)}` },
          ],
        };
      if (value.length === 0)
        return {
          problems: [{ path: valueAt, code: 'minimum', message: `filter ${i}: contains needs at least 1 character` }],
        };
      if (value.length > MAX_STRING_LENGTH)
        return {
          problems: [
            {
              path: valueAt,
              code: 'maximum',
              message: `filter ${i}: a value may have at most ${MAX_STRING_LENGTH} characters`,
            },
          ],
        };
      return { problems, checked: { field: ref, operator: op, value } };
    case 'in': {
      if (!Array.isArray(value))
        return {
          problems: [
            {
              path: valueAt,
              code: 'type',
              message: `filter ${i}: in needs an array of 1 to ${MAX_IN_VALUES} values, got ${describe(value)}`,
            },
          ],
        };
      if (value.length === 0 || value.length > MAX_IN_VALUES) {
        return {
          problems: [
            {
              path: valueAt,
              code: value.length === 0 ? 'minimum' : 'maximum',
              message: `filter ${i}: in needs an array of 1 to ${MAX_IN_VALUES} values, got ${value.length}`,
            },
          ],
        };
      }
      const itemProblems = value
        .map((item, j) => checkScalar(i, ref, item, `${valueAt}/${j}`, false))
        .filter((p): p is ErrorDetail => p !== undefined);
      if (itemProblems.length > 0) return { problems: itemProblems };
      if (ref.type === 'column' && ref.info.kind === 'enum') {
        const unknown = value.findIndex((item) => !(employmentTypes as readonly unknown[]).includes(item));
        if (unknown >= 0)
          return {
            problems: [
              {
                path: `${valueAt}/${unknown}`,
                code: 'enum',
                message: `filter ${i}: employmentType is one of ${employmentTypes.join(', ')}`,
              },
            ],
          };
      }
      return { problems, checked: { field: ref, operator: op, value: value as Array<string | number> } };
    }
    case 'equals': {
      const problem = checkScalar(i, ref, value, valueAt, true);
      if (problem) return { problems: [problem] };
      if (
        ref.type === 'column' &&
        ref.info.kind === 'enum' &&
        !(employmentTypes as readonly unknown[]).includes(value)
      ) {
        return {
          problems: [
            {
              path: valueAt,
              code: 'enum',
              message: `filter ${i}: employmentType is one of ${employmentTypes.join(', ')}`,
            },
          ],
        };
      }
      return { problems, checked: { field: ref, operator: op, value: value as Scalar } };
    }
    case 'gte':
    case 'lte': {
      const problem = checkScalar(i, ref, value, valueAt, false);
      if (problem) return { problems: [problem] };
      return { problems, checked: { field: ref, operator: op, value: value as string | number } };
    }
  }
}

/**
 * Checks a targeting (as the contract describes it; anything else is reported, not thrown) and returns the
 * checked form or every problem. `basePath` is the pointer of the targeting object in the request.
 */
export function checkTargeting(
  targeting: unknown,
  basePath = '/body/targeting',
): { ok: true; targeting: CheckedTargeting } | { ok: false; problems: ErrorDetail[] } {
  if (typeof targeting !== 'object' || targeting === null || Array.isArray(targeting)) {
    return {
      ok: false,
      problems: [{ path: basePath, code: 'type', message: 'targeting must be an object with filters and logic' }],
    };
  }
  const { filters, logic } = targeting as Record<string, unknown>;
  const problems: ErrorDetail[] = [];
  if (logic !== undefined && logic !== 'AND' && logic !== 'OR')
    problems.push({ path: `${basePath}/logic`, code: 'enum', message: 'logic must be AND or OR' });
  if (!Array.isArray(filters)) {
    problems.push({
      path: `${basePath}/filters`,
      code: filters === undefined ? 'required' : 'type',
      message: 'filters must be an array (empty: everyone matches)',
    });
    return { ok: false, problems };
  }
  if (filters.length > MAX_FILTERS) {
    problems.push({
      path: `${basePath}/filters`,
      code: 'maximum',
      message: `at most ${MAX_FILTERS} filters, got ${filters.length}`,
    });
    return { ok: false, problems };
  }
  const checked: CheckedFilter[] = [];
  filters.forEach((filter, i) => {
    const result = checkFilter(i, filter, `${basePath}/filters`);
    problems.push(...result.problems);
    if (result.checked) checked.push(result.checked);
  });
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, targeting: { filters: checked, logic: logic === 'OR' ? 'OR' : 'AND' } };
}
