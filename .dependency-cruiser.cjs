/**
 * Module boundaries of the server, checked by `npm run lint`.
 *
 * A feature module (`server/src/modules/<name>/`) shows other code only its `index.ts`: what other modules, the
 * HTTP layer, the job registry and the scripts may use. Its other files are its own business. The database
 * schema (`db/schema.ts`) is the one reader of each module's `tables.ts`, because the Kysely `Database` type is
 * assembled from them, and the operation map (`modules/handlers.ts`) is the one reader of each module's
 * `handlers.ts`. Benchmarks (`scripts/bench/`) measure modules' internals on purpose and are exempt. Nothing may
 * form a cycle.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'module-internals',
      comment: "A module imports another module only through that module's index.ts.",
      severity: 'error',
      from: { path: '^server/src/modules/([^/]+)/' },
      to: {
        path: '^server/src/modules/[^/]+/',
        pathNot: ['^server/src/modules/$1/', '^server/src/modules/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'module-internals-from-outside',
      comment: 'Code outside the modules (http, jobs, db, start-up, the CLI) uses a module through its index.ts.',
      severity: 'error',
      from: {
        path: '^(server/src|scripts)/',
        pathNot: [
          '^server/src/modules/[^/]+/',
          '^server/src/db/schema\\.ts$',
          '^server/src/modules/handlers\\.ts$',
          '^scripts/bench/',
        ],
      },
      to: { path: '^server/src/modules/[^/]+/', pathNot: '^server/src/modules/[^/]+/index\\.ts$' },
    },
    {
      name: 'operation-map-reads-handlers-only',
      comment: "modules/handlers.ts binds each operationId to its module's handler, and reads nothing else there.",
      severity: 'error',
      from: { path: '^server/src/modules/handlers\\.ts$' },
      to: { path: '^server/src/modules/[^/]+/', pathNot: '^server/src/modules/[^/]+/handlers\\.ts$' },
    },
    {
      name: 'schema-reads-tables-only',
      comment: "db/schema.ts assembles the Database type from each module's tables.ts, and reads nothing else there.",
      severity: 'error',
      from: { path: '^server/src/db/schema\\.ts$' },
      to: { path: '^server/src/modules/[^/]+/', pathNot: '^server/src/modules/[^/]+/tables\\.ts$' },
    },
    {
      name: 'http-knows-no-feature-module',
      comment:
        'The HTTP layer knows no feature module: the composition root (start.ts) hands it their handlers, pages, ' +
        'error answers and record arrays (http/app.ts AppParts), and the API keys as a KeyAuthority ' +
        '(http/auth-context.ts). Which operation does what is read from the contract, never named in http/ ' +
        '(test/platform/layers.test.ts).',
      severity: 'error',
      from: { path: '^server/src/http/' },
      to: { path: '^server/src/modules/' },
    },
    {
      name: 'modules-use-the-http-face',
      comment: 'Feature modules use the HTTP layer through its face, http/index.ts: handler types, errors, pagination.',
      severity: 'error',
      from: { path: '^server/src/modules/' },
      to: { path: '^server/src/http/', pathNot: '^server/src/http/index\\.ts$' },
    },
    {
      name: 'jobs-know-no-http',
      comment: 'Background jobs run beside the HTTP layer, not on it: jobs/ takes Dependencies from dependencies.ts.',
      severity: 'error',
      from: { path: '^server/src/jobs/' },
      to: { path: '^server/src/http/' },
    },
    {
      name: 'one-composition-root',
      comment:
        'start.ts builds the Dependencies and assembles the modules (job-registry.ts, modules/handlers.ts); ' +
        'nothing below it imports it, and the Dependencies type names no feature module.',
      severity: 'error',
      from: { path: '^server/src/(modules|http|jobs|db|lib)/' },
      to: { path: '^server/src/(start|job-registry)\\.ts$' },
    },
    {
      name: 'dependencies-name-no-module',
      comment: 'The Dependencies every layer names are interfaces and shared services, never a feature module.',
      severity: 'error',
      from: { path: '^server/src/dependencies\\.ts$' },
      to: { path: '^server/src/modules/' },
    },
    {
      name: 'operator-tools-off-the-request-path',
      comment: "Citus tenant placement and moves are the admin CLI's tools: no module and no HTTP code imports them.",
      severity: 'error',
      from: { path: '^server/src/(modules|http|jobs)/' },
      to: { path: '^server/src/db/citus-tenants\\.ts$' },
    },
    {
      name: 'no-own-index',
      comment: 'Inside a module, files import their siblings; the index is for the outside (and would make cycles).',
      severity: 'error',
      from: { path: '^server/src/modules/([^/]+)/' },
      to: { path: '^server/src/modules/$1/index\\.ts$' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^server/src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
