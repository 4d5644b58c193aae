/**
 * Serving a stored file: the byte range an HTTP `Range` asks for (RFC 9110 §14), and a stream that reads only
 * the chunks (and parts of chunks) that range covers, one at a time, so a download uses constant memory.
 */
import { Readable } from 'node:stream';
import type { Db } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { listChunks, readChunkSlice } from './repository.js';

export type RangeAnswer =
  { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * One `bytes=` range over a file of `size` bytes (`end` inclusive). Anything this does not understand — another
 * unit, several ranges, a malformed value — is ignored and the whole file is sent, as RFC 9110 allows.
 */
export function parseRange(header: string | undefined, size: number): RangeAnswer {
  if (header === undefined) return { kind: 'full' };
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return { kind: 'full' };
  const [, first, last] = match as unknown as [string, string, string];
  if (first === '' && last === '') return { kind: 'full' };
  if (first === '') {
    // The last n bytes.
    const n = Number(last);
    if (n === 0) return { kind: 'unsatisfiable' };
    return size === 0 ? { kind: 'unsatisfiable' } : { kind: 'partial', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(first);
  if (start >= size) return { kind: 'unsatisfiable' };
  if (last === '') return { kind: 'partial', start, end: size - 1 };
  const end = Number(last);
  if (end < start) return { kind: 'full' };
  return { kind: 'partial', start, end: Math.min(end, size - 1) };
}

/** Bytes [start, end] (inclusive) of the file formed by `attempt`'s chunks. */
export function fileStream(
  db: Db,
  tenant: Tenant,
  exportId: string,
  attempt: number,
  start: number,
  end: number,
): Readable {
  async function* bytes() {
    if (end < start) return;
    for (const chunk of await listChunks(db, tenant, exportId, attempt)) {
      const chunkEnd = chunk.byte_offset + chunk.length - 1;
      if (chunkEnd < start) continue;
      if (chunk.byte_offset > end) break;
      const from = Math.max(start, chunk.byte_offset) - chunk.byte_offset;
      const to = Math.min(end, chunkEnd) - chunk.byte_offset;
      yield await readChunkSlice(db, tenant, exportId, attempt, chunk.seq, from, to - from + 1);
    }
  }
  return Readable.from(bytes(), { objectMode: false });
}
