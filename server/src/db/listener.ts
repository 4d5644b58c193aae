/**
 * A dedicated connection that LISTENs, and keeps listening: when the database goes away (restart, failover, a
 * killed backend) it reconnects with capped exponential backoff and jitter and subscribes its channels again.
 * A notification sent while it was away is lost for good, so its owner hears of every gap: `onLost` when it
 * stops listening, `onListening` when it listens (again), and must treat the gap as "anything may have changed"
 * (drop a cache, rescan for due work).
 */
import pg from 'pg';
import type { Config } from '../config.js';
import { reconnectDelay, type DatabaseAvailability } from './availability.js';

export interface ListenerOptions {
  connectionString: string;
  /** Its `application_name`, by which pg_stat_activity tells the listeners apart. */
  applicationName: string;
  channels: readonly string[];
  onNotification(message: pg.Notification): void;
  /** Listening: at start and after every reconnection. Whatever was notified in between was missed. */
  onListening?(): void;
  /** No longer listening (the connection failed); `onListening` follows once it is back. */
  onLost?(): void;
  availability: DatabaseAvailability;
  reconnectMaxDelayMs: number;
  connectTimeoutMs: number;
}

/** Where a listener connects and how it treats the connection: the same for every listener of a process. */
export type ListenerConnection = Pick<
  ListenerOptions,
  'connectionString' | 'availability' | 'reconnectMaxDelayMs' | 'connectTimeoutMs'
>;

export function listenerConnection(
  config: Pick<Config, 'databaseReconnectMaxDelayMs' | 'databaseConnectTimeoutMs'>,
  availability: DatabaseAvailability,
  connectionString: string,
): ListenerConnection {
  return {
    connectionString,
    availability,
    reconnectMaxDelayMs: config.databaseReconnectMaxDelayMs,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
  };
}

export class Listener {
  private client: pg.Client | undefined;
  private connected = false;
  private closed = false;
  private attempt = 0;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly options: ListenerOptions) {}

  /** Resolves after the first attempt, listening or not (then it keeps trying in the background). */
  async start(): Promise<void> {
    await this.connect();
  }

  get listening(): boolean {
    return this.connected;
  }

  /** A statement on this connection (a reply on its channel, say); fails when it is not connected. */
  async query(text: string, values: unknown[]): Promise<void> {
    if (!this.client || !this.connected) throw new Error('the listener is not connected');
    await this.client.query(text, values);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const { options } = this;
    const client = new pg.Client({
      connectionString: options.connectionString,
      application_name: options.applicationName,
      connectionTimeoutMillis: options.connectTimeoutMs,
      keepAlive: true,
    });
    let lost = false;
    const onFailure = (error?: unknown) => {
      if (error) options.availability.failed(error, options.applicationName);
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = undefined;
      const wasListening = this.connected;
      this.connected = false;
      client.end().catch(() => {});
      if (wasListening) options.onLost?.();
      if (this.closed) return;
      this.retry = setTimeout(() => void this.connect(), reconnectDelay(this.attempt++, options.reconnectMaxDelayMs));
    };
    // Without an 'error' listener, a connection's loss would be thrown as an uncaught exception.
    client.on('error', onFailure);
    client.on('end', () => onFailure());
    client.on('notification', (message) => options.onNotification(message));
    this.client = client;
    try {
      await client.connect();
      for (const channel of options.channels) await client.query(`listen ${client.escapeIdentifier(channel)}`);
      if (lost || this.closed) return;
      this.attempt = 0;
      this.connected = true;
      options.availability.reached();
      options.onListening?.();
    } catch (error) {
      onFailure(error);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.connected = false;
    await client?.end().catch(() => {});
  }
}
