/**
 * The HTTP layer's face to the feature modules: what a handler is, the errors it may throw, pagination, and the few
 * pieces of request plumbing that modules need when they reply to some requests themselves (the respondents' pages,
 * the SCIM server) or check input beyond the contract. Modules import `http/` only through this file
 * (dependency-cruiser `modules-use-the-http-face`); everything else in `http/` is the pipeline's own business.
 */
export type {
  BareReply,
  Handler,
  HandlerInput,
  HandlerMap,
  JsonReply,
  OperationId,
  PathParams,
  QueryParams,
  RawReply,
  Reply,
  RequestBody,
  SuccessStatus,
} from './handler.js';
export { tenantOf } from './handler.js';
export type { AuthContext, KeyAuthority } from './auth-context.js';
export * from './errors.js';
export * from './pagination.js';
export type { SemanticCheck, SemanticChecks } from './semantic.js';

// Input checks beyond the contract's schemas (a sync's records are validated one by one, audit filters).
export { contractPath } from './contract.js';
export { strictFormats } from './formats.js';
export { checkValue, hasUnstorableCharacter } from './input-checks.js';
export { apiErrorOf, codeOf } from './error-handler.js';

// For modules that reply to some requests themselves: the public pages and the SCIM server.
export { readLimitedText } from './body.js';
export { sendThenDrain } from './drain.js';
export { withinLength } from './envelope.js';
export { showingThisServer, thisServer } from './this-server.js';
