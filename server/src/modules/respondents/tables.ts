/** Tables of the respondents module (respondents, sync jobs). Filled in by the respondents issue. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface RespondentTables {}
