/**
 * Exports end to end: start an export, wait for it, and stream its file to disk, resuming a broken download
 * with `Range` instead of starting over. Node.js only (it writes a file); `node:fs` is loaded on first use so
 * that the rest of the SDK stays usable in browsers.
 */
import type { Client } from 'openapi-fetch';
import { SurveyServiceError, TimeoutError, errorFromResponse } from './errors.js';
import type { Export, ExportRequest, paths } from './generated/openapi.js';
import { waitFor, type WaitOptions } from './polling.js';
import { unwrap } from './unwrap.js';

/** Thrown by `exportResponsesToFile` when the export ends `failed`; `exportResource.error` says why. */
export class ExportFailedError extends Error {
  constructor(readonly exportResource: Export) {
    super(`Export ${exportResource.id} failed: ${exportResource.error ?? 'no reason given'}`);
    this.name = 'ExportFailedError';
  }
}

/** The part of Node's `FileHandle` used here (typed locally: the SDK does not depend on Node's types). */
interface FileHandleLike {
  write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<unknown>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

export interface DownloadOptions {
  /** How many times a broken download is resumed (default 5). */
  maxResumes?: number;
  signal?: AbortSignal;
}

/** Polls `GET /api/v1/exports/{exportId}` until the export is `completed` or `failed`, and returns it. */
export async function waitForExport(
  client: Client<paths>,
  exportId: string,
  options: WaitOptions = {},
): Promise<Export> {
  const fetchExport = async () =>
    (await unwrap(
      client.GET('/api/v1/exports/{exportId}', { params: { path: { exportId } }, signal: options.signal }),
    )) as Export;
  try {
    return await waitFor(fetchExport, (e) => e.status === 'completed' || e.status === 'failed', options);
  } catch (error) {
    if (error instanceof TimeoutError)
      throw new TimeoutError(`Export ${exportId} did not finish within ${options.timeoutMs ?? 300_000} ms`);
    throw error;
  }
}

/**
 * Streams a completed export's file to `filePath` (created or overwritten) in constant memory. A connection
 * that breaks mid-way is resumed from the bytes already written (`Range` with `If-Range`), up to `maxResumes`
 * times; if the file changed meanwhile the server sends it whole and the download starts over.
 */
export async function downloadExportToFile(
  client: Client<paths>,
  exportResource: Export,
  filePath: string,
  options: DownloadOptions = {},
): Promise<number> {
  // A computed specifier: bundlers for browsers leave it alone, and the SDK needs no Node type declarations.
  const fsModule = 'node:fs/promises';
  const { open } = (await import(fsModule)) as { open(path: string, flags: string): Promise<FileHandleLike> };
  const expected = exportResource.size;
  const file = await open(filePath, 'w');
  let written = 0;
  let etag: string | null = null;
  let resumes = 0;
  try {
    for (;;) {
      try {
        const header: { Range?: string; 'If-Range'?: string } = {};
        if (written > 0) {
          header.Range = `bytes=${written}-`;
          if (etag) header['If-Range'] = etag;
        }
        const { response, error } = await client.GET('/api/v1/exports/{exportId}/download', {
          params: { path: { exportId: exportResource.id }, header },
          parseAs: 'stream',
          signal: options.signal,
        });
        if (!response.ok) throw errorFromResponse(response, error);
        if (response.status === 200 && written > 0) {
          // The server sent the whole file (a new one, or it ignored the range): start over.
          written = 0;
          await file.truncate(0);
        }
        etag = response.headers.get('etag');
        if (!response.body) throw new Error('the download has no body');
        for await (const part of response.body as unknown as AsyncIterable<Uint8Array>) {
          await file.write(part, 0, part.length, written);
          written += part.length;
        }
        if (expected === null || written >= expected) return written;
        throw new Error(`the download ended after ${written} of ${expected} bytes`);
      } catch (error) {
        if (error instanceof SurveyServiceError || options.signal?.aborted || ++resumes > (options.maxResumes ?? 5))
          throw error;
      }
    }
  } finally {
    await file.close();
  }
}

/**
 * Starts an export of a survey's responses, waits until it is completed and writes the file to `filePath`;
 * returns the completed export (pass its `id` as tomorrow's `sinceExport`: the chain holds each response once). Throws
 * `ExportFailedError` when the export fails, `TimeoutError` when it does not finish in `timeoutMs`.
 *
 * ```ts
 * const done = await exportResponsesToFile(client, surveyId, { format: 'ndjson', sinceExport: lastExportId },
 * './responses.ndjson');
 * ```
 */
export async function exportResponsesToFile(
  client: Client<paths>,
  surveyId: string,
  request: ExportRequest,
  filePath: string,
  options: WaitOptions & DownloadOptions & { idempotencyKey?: string } = {},
): Promise<Export> {
  const started = (await unwrap(
    client.POST('/api/v1/surveys/{id}/responses/export', {
      params: {
        path: { id: surveyId },
        header: options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {},
      },
      body: request,
      signal: options.signal,
    }),
  )) as Export;
  const done = await waitForExport(client, started.id, options);
  if (done.status !== 'completed') throw new ExportFailedError(done);
  await downloadExportToFile(client, done, filePath, options);
  return done;
}
