/** Tables of the surveys module (surveys, responses). Filled in by the surveys issue. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface SurveyTables {}
