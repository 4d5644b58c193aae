/**
 * API keys: issue, list and revoke an organization's LIVE and TEST keys, resolve a presented key, and keep the
 * per-process cache of resolved keys that a revocation empties in every process before it replies.
 *
 * Other modules, the HTTP layer and the admin CLI import only from this file.
 */
export { announceOrganizationChange } from './announce.js';
export { ApiKeyAuthority } from './key-authority.js';
export { KeyCache } from './key-cache.js';
export { hashKey, keyFormat } from './key-material.js';
export { findKeyByHash, insertKey, listKeys, revokeKeyById, touchKey, type KeyWithOrganization } from './repository.js';
export { toApiKey } from './service.js';
