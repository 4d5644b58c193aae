/**
 * Organizations: the tenants, created and changed by the admin CLI and the first start.
 *
 * Other code imports only from this file.
 */
export {
  countOrganizations,
  findOrganization,
  insertOrganization,
  listOrganizations,
  plans,
  updateOrganization,
} from './repository.js';
