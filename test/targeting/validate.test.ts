/** The targeting type rules: what fits, and 400 details that name the filter by index. Pure, no database. */
import { describe, expect, it } from 'vitest';
import { checkTargeting, compileTargeting } from '../../server/src/modules/targeting/index.js';
import { ApiError } from '../../server/src/http/errors.js';

type Filter = { field: string; operator: string; value: unknown };
const check = (...filters: Filter[]) => checkTargeting({ filters, logic: 'AND' });
const problemsOf = (...filters: Filter[]) => {
  const result = check(...filters);
  return result.ok ? [] : result.problems;
};

describe('checkTargeting', () => {
  it('accepts every documented combination', () => {
    const valid: Filter[] = [
      { field: 'department', operator: 'equals', value: 'Sales' },
      { field: 'department', operator: 'in', value: ['Sales', 'Ops'] },
      { field: 'email', operator: 'contains', value: '@example' },
      { field: 'lastName', operator: 'gte', value: 'M' },
      { field: 'hireDate', operator: 'lte', value: '2024-02-29' },
      { field: 'hireDate', operator: 'in', value: ['2024-01-01'] },
      { field: 'employmentType', operator: 'in', value: ['full_time', 'intern'] },
      { field: 'managerId', operator: 'exists', value: false },
      { field: 'attributes.remote', operator: 'equals', value: true },
      { field: 'attributes.level', operator: 'gte', value: 3 },
      { field: 'attributes.level', operator: 'in', value: [1, 'two'] },
      { field: 'attributes.team', operator: 'contains', value: 'core' },
      { field: 'attributes.start', operator: 'lte', value: '2025-01-01' },
      { field: 'attributes.anything', operator: 'exists', value: true },
    ];
    const result = checkTargeting({ filters: valid, logic: 'OR' });
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.targeting.logic).toBe('OR');
    expect(checkTargeting({ filters: [] })).toMatchObject({ ok: true, targeting: { filters: [], logic: 'AND' } });
  });

  const refused: Array<[string, Filter, string, string]> = [
    ['an unknown field', { field: 'salary', operator: 'equals', value: '1' }, 'field', 'unknown field "salary"'],
    [
      'a malformed attribute name',
      { field: 'attributes.a-b', operator: 'equals', value: '1' },
      'field',
      'unknown field',
    ],
    [
      'an unknown operator',
      { field: 'department', operator: 'like', value: 'x' },
      'operator',
      'operator must be one of',
    ],
    [
      'a number on a text field',
      { field: 'department', operator: 'equals', value: 3 },
      'value',
      'needs a string value, got a number',
    ],
    ['a boolean on a text field', { field: 'location', operator: 'equals', value: true }, 'value', 'got a boolean'],
    ['a non-date on hireDate', { field: 'hireDate', operator: 'gte', value: '2024-13-01' }, 'value', 'YYYY-MM-DD'],
    [
      'a day that does not exist',
      { field: 'hireDate', operator: 'equals', value: '2023-02-29' },
      'value',
      'an existing day',
    ],
    [
      'contains on a date',
      { field: 'hireDate', operator: 'contains', value: '2024' },
      'operator',
      'contains does not fit hireDate',
    ],
    [
      'contains with a number',
      { field: 'attributes.level', operator: 'contains', value: 3 },
      'value',
      'contains needs a string',
    ],
    ['an empty contains', { field: 'jobTitle', operator: 'contains', value: '' }, 'value', 'at least 1 character'],
    ['in with a scalar', { field: 'department', operator: 'in', value: 'Sales' }, 'value', 'in needs an array'],
    [
      'in with an empty array',
      { field: 'department', operator: 'in', value: [] },
      'value',
      'in needs an array of 1 to 100 values, got 0',
    ],
    [
      'in with a boolean on an attribute',
      { field: 'attributes.remote', operator: 'in', value: [true] },
      'value/0',
      'a string or number',
    ],
    [
      'exists with a string',
      { field: 'department', operator: 'exists', value: 'yes' },
      'value',
      'exists needs true or false',
    ],
    ['gte with a boolean', { field: 'attributes.remote', operator: 'gte', value: true }, 'value', 'a string or number'],
    [
      'an unknown employment type',
      { field: 'employmentType', operator: 'equals', value: 'freelance' },
      'value',
      'employmentType is one of',
    ],
    [
      'a number in a text in-list',
      { field: 'department', operator: 'in', value: ['Sales', 7] },
      'value/1',
      'got a number',
    ],
  ];
  for (const [name, filter, where, message] of refused) {
    it(`refuses ${name}, naming the filter by index`, () => {
      const ok = { field: 'department', operator: 'equals', value: 'Sales' };
      const problems = problemsOf(ok, ok, filter);
      expect(problems).toHaveLength(1);
      expect(problems[0]!.path).toBe(`/body/targeting/filters/2/${where}`);
      expect(problems[0]!.message).toMatch(/^filter 2: /);
      expect(problems[0]!.message).toContain(message);
      expect(problems[0]!.code).toMatch(/^[a-z_]+$/);
    });
  }

  it('reports every bad filter at once, and the logic', () => {
    const result = checkTargeting(
      {
        filters: [
          { field: 'x', operator: 'equals', value: 1 },
          { field: 'department', operator: 'in', value: 2 },
        ],
        logic: 'XOR',
      },
      '/query/segment',
    );
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.problems.map((p) => p.path).sort()).toEqual([
        '/query/segment/filters/0/field',
        '/query/segment/filters/1/value',
        '/query/segment/logic',
      ]);
  });

  it('compileTargeting throws the API 400 with the same details', () => {
    let caught: unknown;
    try {
      compileTargeting({ filters: [{ field: 'hireDate', operator: 'contains', value: '1' }] });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect((caught as ApiError).status).toBe(400);
    expect((caught as ApiError).details?.[0]?.path).toBe('/body/targeting/filters/0/operator');
  });
});
