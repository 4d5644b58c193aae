/**
 * `date` and `date-time` as the service can use them: RFC 3339 with real calendar checks (ajv-formats' full
 * mode: no `2024-02-30`, no hour 25), a year from 0001 (PostgreSQL has no year 0000) and, for date-times, a
 * value JavaScript's Date can hold (no leap-second `:60`, which would reach SQL as an invalid timestamp). The
 * request validator and the respondent record validator use the same definitions.
 */
import formatsModule from 'ajv-formats/dist/formats.js';

const { fullFormats } = formatsModule as unknown as {
  fullFormats: Record<string, { validate: (value: string) => boolean } | ((value: string) => boolean)>;
};

function validatorOf(name: string): (value: string) => boolean {
  const format = fullFormats[name]!;
  return typeof format === 'function' ? format : format.validate;
}

const fullDate = validatorOf('date');
const fullDateTime = validatorOf('date-time');

export const strictFormats = {
  date: { type: 'string' as const, validate: (value: string) => fullDate(value) && !value.startsWith('0000') },
  'date-time': {
    type: 'string' as const,
    validate: (value: string) =>
      fullDateTime(value) &&
      !value.startsWith('0000') &&
      !Number.isNaN(Date.parse(value)) &&
      !/:60(\.|z|Z|[+-])/.test(value),
  },
};
