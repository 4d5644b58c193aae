/**
 * SCIM 2.0 (RFC 7643, RFC 7644) under `/scim/v2`: identity providers and HR systems provision respondents as Users.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { scimErrors } from './errors.js';
