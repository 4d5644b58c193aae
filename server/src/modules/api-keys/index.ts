/**
 * API keys: issue, list and revoke an organization's LIVE and TEST keys, and resolve a presented key.
 *
 * Other modules, the HTTP layer and the admin CLI import only from this file.
 */
export { hashKey, keyFormat } from './key-material.js';
export { findKeyByHash, insertKey, listKeys, revokeKeyById, touchKey, type KeyWithOrganization } from './repository.js';
export { toApiKey } from './service.js';
