/**
 * Targeting: filters on respondent fields and custom attributes, checked against the documented type rules
 * and compiled to one parameterised SQL condition. Used by distributions (preview and send, over
 * `respondents`) and by analytics (over the recipient snapshots in `distribution_recipients`).
 *
 * Stable API: other modules import only from this file.
 */
export {
  checkTargeting,
  MAX_FILTERS,
  MAX_IN_VALUES,
  type CheckedFilter,
  type CheckedTargeting,
  type Targeting,
  type TargetingFilter,
} from './validate.js';
export {
  compileChecked,
  compileTargeting,
  escapeLike,
  recipientsTarget,
  respondentsOf,
  respondentsTarget,
  type TargetShape,
} from './compile.js';
export { columnFields, employmentTypes, resolveField, type ColumnField } from './fields.js';
