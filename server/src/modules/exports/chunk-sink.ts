/**
 * The file's destination: a Writable that cuts the bytes into chunks of CHUNK_SIZE and inserts each one into
 * `export_chunks` (tagged with the job's attempt). One insert runs while the next chunk fills (double buffering);
 * a second full chunk waits for it, so backpressure reaches the writers and memory stays at about two chunks. Chunks
 * commit one by one; they become the file only when the export is
 * marked completed with this attempt (see runner.ts).
 */
import { Writable } from 'node:stream';
import type { Db } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import { insertChunk } from './repository.js';

export const CHUNK_SIZE = 1024 * 1024;

export class ChunkSink extends Writable {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private seq = 0;
  private inFlight: Promise<void> = Promise.resolve();
  /** Bytes stored so far (the file's size once finished). */
  written = 0;

  constructor(
    private readonly db: Db,
    private readonly tenant: Tenant,
    private readonly exportId: string,
    private readonly attempt: number,
  ) {
    super({ highWaterMark: CHUNK_SIZE });
  }

  override _write(chunk: Buffer | string, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
    this.pending.push(buffer);
    this.pendingBytes += buffer.length;
    if (this.pendingBytes < CHUNK_SIZE) return callback();
    this.flushFull().then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.flushFull()
      .then(() => this.enqueue(Buffer.concat(this.pending)))
      .then(() => this.inFlight)
      .then(() => callback(), callback);
  }

  private async flushFull(): Promise<void> {
    let all = Buffer.concat(this.pending);
    while (all.length >= CHUNK_SIZE) {
      await this.enqueue(all.subarray(0, CHUNK_SIZE));
      all = all.subarray(CHUNK_SIZE);
    }
    // Copy the remainder so the big concatenated buffer can be freed.
    this.pending = all.length > 0 ? [Buffer.from(all)] : [];
    this.pendingBytes = all.length;
  }

  /** Waits for the previous insert, then starts this one and returns (it runs while the caller goes on). */
  private async enqueue(data: Buffer): Promise<void> {
    await this.inFlight;
    if (data.length === 0) return;
    const seq = this.seq;
    const offset = this.written;
    this.seq += 1;
    this.written += data.length;
    this.inFlight = insertChunk(this.db, this.tenant, this.exportId, this.attempt, seq, offset, data);
    // A failure surfaces at the next enqueue or at _final; until then it must not count as unhandled.
    this.inFlight.catch(() => undefined);
  }
}
