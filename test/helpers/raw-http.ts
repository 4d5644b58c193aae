/**
 * Raw HTTP against the service, and a check of every reply against the contract: its status is documented
 * for the operation, and its JSON body validates against that status's schema (Ajv over the bundled
 * document). For requests the SDK cannot make: odd paths, headers, bodies and media types.
 */
import http from 'node:http';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import { escapePointer, loadDocument } from '../contract/document.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => Ajv2020;

export const contract = loadDocument() as unknown as {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        responses: Record<string, unknown>;
        parameters?: unknown[];
        requestBody?: unknown;
        security?: unknown[];
      }
    >
  >;
};

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addSchema(contract as object, 'doc');
const compiled = new Map<string, ValidateFunction | null>();

export interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: unknown;
}

/** One request with full control over method, raw path, headers and body bytes. */
export function raw(
  base: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string | string[]>; body?: string | Buffer; rawHeaders?: string[] } = {},
): Promise<RawReply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { ...(options.headers ?? {}) };
    if (options.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length'))
      headers['content-length'] = String(Buffer.byteLength(options.body));
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: options.rawHeaders ? ['Host', url.host, ...options.rawHeaders] : headers,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    if (options.body !== undefined) request.end(options.body);
    else request.end();
  });
}

/** The validator of `operation`'s reply with `status` (null: no JSON schema, e.g. a file). */
function validatorFor(template: string, method: string, status: number): ValidateFunction | null | undefined {
  const id = `${method} ${template} ${status}`;
  if (compiled.has(id)) return compiled.get(id);
  const item = contract.paths[template];
  // A 405 refuses a method the path lacks: it is documented on the path's operations.
  const operation =
    item?.[method.toLowerCase()] ??
    (status === 405 ? Object.entries(item ?? {}).find(([key]) => key !== 'parameters')?.[1] : undefined);
  const responses = operation?.responses;
  if (!responses || !(String(status) in responses)) return undefined;
  const documentedMethod = item?.[method.toLowerCase()]
    ? method.toLowerCase()
    : Object.keys(item ?? {}).find((key) => key !== 'parameters')!;
  const pointer = `doc#/paths/${escapePointer(template)}/${documentedMethod}/responses/${status}`;
  let response = responses[String(status)] as { $ref?: string; content?: Record<string, { schema?: unknown }> };
  let base = pointer;
  if (response.$ref) {
    base = `doc${response.$ref}`;
    const name = response.$ref.split('/').pop()!;
    response = (contract as unknown as { components: { responses: Record<string, typeof response> } }).components
      .responses[name]!;
  }
  const validate = response.content?.['application/json']?.schema
    ? ajv.compile({ $ref: `${base}/content/application~1json/schema` })
    : null;
  compiled.set(id, validate);
  return validate;
}

/** Asserts what every reply must satisfy: a documented status, and a body valid against its schema. */
export function expectDocumented(
  template: string,
  method: string,
  reply: RawReply,
  context = '',
  allowed5xx: number[] = [501],
): void {
  const where = `${method} ${template} → ${reply.status} ${context}\n${reply.text.slice(0, 600)}`;
  // No 5xx, except 501 for operations not provided yet (documented as such).
  if (reply.status >= 500) expect(allowed5xx, where).toContain(reply.status);
  const validate = validatorFor(template, method, reply.status);
  expect(validate, `status ${reply.status} is not documented: ${where}`).not.toBeUndefined();
  if (validate) {
    const valid = validate(reply.body);
    expect(valid, `${where}\n${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(true);
  }
}
