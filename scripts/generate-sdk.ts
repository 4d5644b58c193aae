/**
 * Generates the SDK's resource methods (`sdk/src/generated/resources.ts`) from the bundled document: one method
 * per operation, named by the table below (`client.surveys.list()`, `client.webhooks.deliveries.redeliver(…)`),
 * with the path parameters first (in path order), then the body and/or the query, then `CallOptions`; and a
 * `…All()` async iterator beside every paginated list. Part of `npm run generate`, so it is checked for drift.
 *
 * The table is explicit (not derived from operationIds) so that names read well and never change by accident:
 * an operation without a name here fails generation.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** operationId → the method's place on the client. */
export const methodNames: Record<string, string> = {
  listSurveys: 'surveys.list',
  createSurvey: 'surveys.create',
  generateSurvey: 'surveys.generate',
  getSurvey: 'surveys.get',
  listSurveyVersions: 'surveys.versions',
  getSurveyTranslation: 'surveys.translations.get',
  upsertSurveyTranslation: 'surveys.translations.upsert',
  deleteSurveyTranslation: 'surveys.translations.delete',
  updateSurvey: 'surveys.update',
  deleteSurvey: 'surveys.delete',
  launchSurvey: 'surveys.launch',
  pauseSurvey: 'surveys.pause',
  closeSurvey: 'surveys.close',
  listResponses: 'responses.list',
  submitResponse: 'responses.submit',
  getResponse: 'responses.get',
  deleteResponse: 'responses.delete',
  exportResponses: 'exports.create',
  getExport: 'exports.get',
  downloadExport: 'exports.download',
  listExportDeletions: 'exports.deletions.list',
  listRespondents: 'respondents.list',
  getRespondent: 'respondents.get',
  upsertRespondent: 'respondents.upsert',
  deleteRespondent: 'respondents.delete',
  startRespondentSync: 'respondents.sync',
  getSyncJob: 'respondents.getSyncJob',
  distributeSurvey: 'distributions.create',
  previewDistribution: 'distributions.preview',
  listDistributions: 'distributions.list',
  getDistribution: 'distributions.get',
  listDistributionRecipients: 'distributions.recipients.list',
  downloadDistributionRecipients: 'distributions.recipients.download',
  getStaticAnalytics: 'analytics.static',
  getSmartAnalytics: 'analytics.smart',
  listQuestionTrends: 'analytics.trends',
  generateAiAnalysis: 'analytics.ai.generate',
  getAiAnalysis: 'analytics.ai.get',
  getLatestAiAnalysis: 'analytics.ai.latest',
  getAnalyticsSettings: 'analytics.settings.get',
  updateAnalyticsSettings: 'analytics.settings.update',
  listWebhooks: 'webhooks.list',
  createWebhook: 'webhooks.create',
  getWebhook: 'webhooks.get',
  updateWebhook: 'webhooks.update',
  deleteWebhook: 'webhooks.delete',
  rotateWebhookSecret: 'webhooks.rotateSecret',
  sendTestWebhook: 'webhooks.sendTest',
  listWebhookDeliveries: 'webhooks.deliveries.list',
  getWebhookDelivery: 'webhooks.deliveries.get',
  redeliverWebhookDelivery: 'webhooks.deliveries.redeliver',
  listEvents: 'events.list',
  listApiKeys: 'apiKeys.list',
  createApiKey: 'apiKeys.create',
  revokeApiKey: 'apiKeys.revoke',
  getMe: 'account.me',
  getLiveness: 'meta.liveness',
  getReadiness: 'meta.readiness',
  getOpenApiDocument: 'meta.openApiDocument',
  getScimServiceProviderConfig: 'scim.serviceProviderConfig',
  listScimResourceTypes: 'scim.resourceTypes',
  getScimResourceType: 'scim.resourceType',
  listScimSchemas: 'scim.schemas',
  getScimSchema: 'scim.schema',
  listScimUsers: 'scim.users.list',
  createScimUser: 'scim.users.create',
  getScimUser: 'scim.users.get',
  replaceScimUser: 'scim.users.replace',
  patchScimUser: 'scim.users.patch',
  deleteScimUser: 'scim.users.delete',
  submitScimBulk: 'scim.bulk',
  createPrivacyRequest: 'privacy.requests.create',
  getPrivacyRequest: 'privacy.requests.get',
  listPrivacyRequests: 'privacy.requests.list',
  listAuditLog: 'auditLog.list',
  getRetentionSettings: 'privacy.retention.get',
  updateRetentionSettings: 'privacy.retention.update',
  previewRetention: 'privacy.retention.preview',
  downloadPrivacyRequest: 'privacy.requests.download',
};

/** Operations that answer a file, not JSON: their methods resolve to the raw `Response`. */
const fileOperations = new Set(['downloadExport', 'downloadDistributionRecipients', 'downloadPrivacyRequest']);
const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface OperationInfo {
  operationId: string;
  method: (typeof methods)[number];
  path: string;
  summary: string;
  pathParams: string[];
  hasQuery: boolean;
  queryRequired: boolean;
  hasBody: boolean;
  bodyRequired: boolean;
  paginated: boolean;
}

type Json = Record<string, any>;

function resolve(document: Json, node: Json | undefined): Json | undefined {
  let current = node;
  while (current && typeof current.$ref === 'string') {
    current = (current.$ref as string)
      .slice(2)
      .split('/')
      .reduce<Json | undefined>((at, key) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document);
  }
  return current;
}

export function operationsOf(document: Json): OperationInfo[] {
  const found: OperationInfo[] = [];
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    for (const method of methods) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p: Json) =>
        resolve(document, p)!,
      );
      const query = parameters.filter((p) => p.in === 'query');
      const body = resolve(document, operation.requestBody);
      const ok = resolve(document, operation.responses?.['200']);
      const okSchema = resolve(document, ok?.content?.['application/json']?.schema);
      found.push({
        operationId: operation.operationId,
        method,
        path,
        summary: operation.summary ?? operation.operationId,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
        hasQuery: query.length > 0,
        queryRequired: query.some((p) => p.required),
        hasBody: body !== undefined,
        bodyRequired: body?.required === true,
        paginated: method === 'get' && okSchema?.properties?.pagination !== undefined,
      });
    }
  }
  return found;
}

function methodSource(op: OperationInfo, name: string): string[] {
  const P = JSON.stringify(op.path);
  const M = JSON.stringify(op.method);
  const args = op.pathParams.map((p) => `${p}: string`);
  const init: string[] = [];
  if (op.pathParams.length > 0) init.push(`path: { ${op.pathParams.join(', ')} }`);
  if (op.hasBody) {
    args.push(`body${op.bodyRequired ? '' : '?'}: BodyOf<${P}, ${M}>`);
    init.push('body');
  }
  if (op.hasQuery) {
    args.push(`query${op.queryRequired ? '' : '?'}: QueryOf<${P}, ${M}>`);
    init.push('query');
  }
  args.push('options?: CallOptions');
  const doc = `/** ${op.summary} — \`${op.method.toUpperCase()} ${op.path}\` (${op.operationId}) */`;
  const lines = fileOperations.has(op.operationId)
    ? [
        doc,
        `${name}: (${args.join(', ')}): Promise<Response> => caller.raw(${M}, ${P}, { ${init.join(', ')} }, options),`,
      ]
    : [
        doc,
        `${name}: (${args.join(', ')}): Promise<ResultOf<${P}, ${M}>> => caller.call(${M}, ${P}, { ${init.join(', ')} }, options),`,
      ];
  if (op.paginated) {
    lines.push(
      `/** Every item of \`${op.operationId}\`, across pages: \`for await (const item of ….${name}All(…))\`. */`,
      `${name}All: (${args.join(', ')}): AsyncGenerator<ItemOf<${P}>, void, undefined> => caller.all(${P}, { ${init.join(', ')} }, options),`,
    );
  }
  return lines;
}

interface Tree {
  [key: string]: Tree | string[];
}

function render(tree: Tree, indent: string): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(tree)) {
    if (Array.isArray(value)) {
      out.push(...value.map((line) => `${indent}${line}`));
    } else {
      out.push(`${indent}${key}: {`, ...render(value, `${indent}  `), `${indent}},`);
    }
  }
  return out;
}

export function resourcesSource(document: Json): string {
  const operations = operationsOf(document);
  const unnamed = operations.filter((op) => !methodNames[op.operationId]);
  if (unnamed.length > 0)
    throw new Error(
      `scripts/generate-sdk.ts: name these operations in methodNames: ${unnamed.map((op) => op.operationId).join(', ')}`,
    );
  const tree: Tree = {};
  for (const op of operations) {
    const parts = methodNames[op.operationId]!.split('.');
    const method = parts.pop()!;
    let node = tree;
    for (const part of parts) node = (node[part] ??= {}) as Tree;
    node[`#${method}`] = methodSource(op, method);
  }
  return [
    '// Generated by scripts/generate-sdk.ts from openapi/bundled/openapi.json (`npm run generate`). Do not edit.',
    "import type { BodyOf, CallOptions, Caller, ItemOf, QueryOf, ResultOf } from '../resources-runtime.js';",
    '',
    '/** The resource methods of a client, one per operation of the document. */',
    'export function createResources(caller: Caller) {',
    '  return {',
    ...render(tree, '    '),
    '  };',
    '}',
    '',
    'export type Resources = ReturnType<typeof createResources>;',
    '',
  ].join('\n');
}

export function generateResources(root: string, bundlePath: string, output: string): void {
  const document = JSON.parse(readFileSync(join(root, bundlePath), 'utf8')) as Json;
  writeFileSync(join(root, output), resourcesSource(document));
}

/** The variables every sample reads: the same names in the README, the SDK README and these samples. */
export const sampleEnvironment = { apiKey: 'SURVEY_API_KEY', baseUrl: 'SURVEY_API_BASE_URL' } as const;

function exampleOf(document: Json, node: Json | undefined): unknown {
  const resolved = resolve(document, node);
  if (!resolved) return undefined;
  if (resolved.example !== undefined) return resolved.example;
  const first = resolved.examples && Object.values<Json>(resolved.examples)[0];
  if (first) return resolve(document, first)?.value;
  return resolved.schema ? resolve(document, resolved.schema)?.example : undefined;
}

/**
 * `x-codeSamples` for one operation (Redoc shows them beside it): curl, and the SDK's resource method. Path
 * parameters and bodies use the document's examples.
 */
export function codeSamplesOf(
  document: Json,
  op: OperationInfo,
): Array<{ lang: string; label: string; source: string }> {
  const operation = document.paths[op.path][op.method] as Json;
  const parameters = [...(document.paths[op.path].parameters ?? []), ...(operation.parameters ?? [])].map((p: Json) =>
    resolve(document, p)!,
  );
  const pathValues = op.pathParams.map((name) =>
    String(
      exampleOf(
        document,
        parameters.find((p) => p.in === 'path' && p.name === name),
      ) ?? `<${name}>`,
    ),
  );
  // Required query parameters (a list's subject, such as a trend's `questionKey`) with their examples.
  const requiredQuery = parameters
    .filter((p) => p.in === 'query' && p.required)
    .map((p) => [p.name as string, exampleOf(document, p) ?? `<${p.name}>`] as const);
  const search = requiredQuery.map(([name, value]) => `${name}=${encodeURIComponent(String(value))}`).join('&');
  const url =
    op.pathParams.reduce((at, name, i) => at.replace(`{${name}}`, pathValues[i]!), op.path) +
    (search ? `?${search}` : '');
  const body = op.hasBody
    ? exampleOf(document, resolve(document, operation.requestBody)?.content?.['application/json'])
    : undefined;
  const secured =
    operation.security === undefined || (Array.isArray(operation.security) && operation.security.length > 0);
  const curl = [`curl -X ${op.method.toUpperCase()} "$${sampleEnvironment.baseUrl}${url}"`];
  if (secured) curl.push(`  -H "Authorization: Bearer $${sampleEnvironment.apiKey}"`);
  // Getting started says to send one on every POST that takes it, so that a retry is never applied twice.
  if (parameters.some((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key'))
    curl.push(`  -H "Idempotency-Key: $(uuidgen)"`);
  if (body !== undefined)
    curl.push(`  -H 'Content-Type: application/json'`, `  -d '${JSON.stringify(body).replace(/'/g, "'\\''")}'`);
  const args = pathValues.map((value) => JSON.stringify(value));
  if (op.hasBody) args.push(body === undefined ? '{}' : JSON.stringify(body, null, 2));
  if (requiredQuery.length > 0) args.push(JSON.stringify(Object.fromEntries(requiredQuery)));
  const call = `client.${methodNames[op.operationId]}(${args.join(', ')})`;
  const ts = [
    "import { createClient } from '@survey-service/sdk';",
    '',
    `const client = createClient({ apiKey: process.env.${sampleEnvironment.apiKey}!, baseUrl: process.env.${sampleEnvironment.baseUrl}! });`,
    fileOperations.has(op.operationId) ? `const response = await ${call};` : `const result = await ${call};`,
    fileOperations.has(op.operationId) ? "console.log(response.headers.get('content-type'));" : 'console.log(result);',
  ];
  return [
    { lang: 'Shell', label: 'curl', source: curl.join(' \\\n') },
    { lang: 'TypeScript', label: 'SDK', source: ts.join('\n') },
  ];
}

/** Adds `x-codeSamples` to every operation of the bundled document in place. */
export function addCodeSamples(document: Json): Json {
  for (const op of operationsOf(document))
    document.paths[op.path][op.method]['x-codeSamples'] = codeSamplesOf(document, op);
  return document;
}

const tableStart = '<!-- methods:start (generated by npm run generate) -->';
const tableEnd = '<!-- methods:end -->';

/** The SDK README's table of methods: every operation, its method, its HTTP call and summary. */
export function methodsTable(document: Json): string {
  const rows = operationsOf(document).map((op) => {
    const args = [
      ...op.pathParams,
      ...(op.hasBody ? [op.bodyRequired ? 'body' : 'body?'] : []),
      ...(op.hasQuery ? [op.queryRequired ? 'query' : 'query?'] : []),
    ];
    const all = op.paginated ? ` · \`${methodNames[op.operationId]}All(…)\`` : '';
    return `| \`client.${methodNames[op.operationId]}(${args.join(', ')})\`${all} | \`${op.method.toUpperCase()} ${op.path}\` | ${op.summary} |`;
  });
  return [tableStart, '', '| method | call | what it does |', '|---|---|---|', ...rows, '', tableEnd].join('\n');
}

/** Replaces the table between its markers in `readme` (the markers must be there). */
export function withMethodsTable(readme: string, document: Json): string {
  const start = readme.indexOf(tableStart);
  const end = readme.indexOf(tableEnd);
  if (start < 0 || end < start) throw new Error(`sdk/README.md lacks the markers ${tableStart} … ${tableEnd}`);
  return readme.slice(0, start) + methodsTable(document) + readme.slice(end + tableEnd.length);
}
