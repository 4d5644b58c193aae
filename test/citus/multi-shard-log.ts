/**
 * The multi-shard plans the cluster's nodes logged, read back from their log files for a test's failure message.
 *
 * With `CITUS_LOG_MULTI_SHARD=1` (cluster.ts) every node logs, for a database of this run, each multi-shard plan
 * before it runs: `LOG:  multi-task query about to be executed`, a `HINT:`, then `STATEMENT:` (and `CONTEXT:` when
 * a function, such as a trigger on a worker's shard, issued it). The files are `node<port>.log` in CITUS_DIR
 * (default /var/tmp/citus-cluster); the line prefix is PostgreSQL's default, `<time> [<pid>] `, without the
 * database. Other test files share the cluster (and another run of the same file logs too), so each plan's session
 * (node and pid) is looked up among the backends that `watchSessions` saw during the window: a plan of another
 * database's session is left out, one of a session it never saw is reported as unattributed.
 *
 * A window is two marks (each file's size); a plan is attributed to the request whose mark precedes it.
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

export const logDir = process.env.CITUS_DIR ?? '/var/tmp/citus-cluster';

/** Each node's log file and its size at one moment; a node is named by its file (`node9700`). */
export type LogMark = ReadonlyMap<string, number>;

function logFiles(): string[] {
  try {
    return readdirSync(logDir)
      .filter((name) => /^node\d+\.log$/.test(name))
      .sort();
  } catch {
    return [];
  }
}

export function markLogs(): LogMark {
  const mark = new Map<string, number>();
  for (const name of logFiles()) {
    try {
      mark.set(name.replace(/\.log$/, ''), statSync(path.join(logDir, name)).size);
    } catch {
      // Not there (any more): nothing to read from it.
    }
  }
  return mark;
}

interface LogRecord {
  node: string;
  /** Byte offset of the record's first line in its file. */
  offset: number;
  time: string;
  pid: number;
  level: string;
  text: string;
}

const recordStart = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+) \[(\d+)\] ([A-Z]+):\s+(.*)$/;

/** The records each node logged between two marks (a record's continuation lines joined to it). */
export function readLogs(from: LogMark, to: LogMark): { records: LogRecord[]; problems: string[] } {
  const records: LogRecord[] = [];
  const problems: string[] = [];
  for (const [node, end] of to) {
    const start = from.get(node) ?? 0;
    if (end <= start) continue;
    let text: string;
    try {
      const fd = openSync(path.join(logDir, `${node}.log`), 'r');
      try {
        const buffer = Buffer.alloc(end - start);
        readSync(fd, buffer, 0, buffer.length, start);
        text = buffer.toString('utf8');
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      problems.push(`${node}.log: ${(error as Error).message}`);
      continue;
    }
    let offset = start;
    let current: LogRecord | undefined;
    for (const line of text.split('\n')) {
      const match = recordStart.exec(line);
      if (match) {
        current = { node, offset, time: match[1]!, pid: Number(match[2]), level: match[3]!, text: match[4]! };
        records.push(current);
      } else if (current && line !== '') {
        current.text += `\n${line}`;
      }
      offset += Buffer.byteLength(line, 'utf8') + 1;
    }
  }
  return { records, problems };
}

export interface MultiShardPlan {
  node: string;
  pid: number;
  offset: number;
  time: string;
  statement: string;
  /** The function (a trigger's PL/pgSQL, say) that ran the statement, when there is one. */
  context?: string;
}

/** Each `multi-task query about to be executed` with the statement (and context) its session logged next. */
export function multiShardPlans(records: readonly LogRecord[]): MultiShardPlan[] {
  const plans: MultiShardPlan[] = [];
  records.forEach((record, i) => {
    if (record.level !== 'LOG' || !record.text.startsWith('multi-task query about to be executed')) return;
    const plan: MultiShardPlan = {
      node: record.node,
      pid: record.pid,
      offset: record.offset,
      time: record.time,
      statement: '',
    };
    for (const next of records.slice(i + 1)) {
      if (next.node !== record.node || next.pid !== record.pid) continue;
      if (next.level === 'HINT' || next.level === 'DETAIL') continue;
      if (next.level === 'CONTEXT') plan.context = next.text;
      else if (next.level === 'STATEMENT') plan.statement = next.text;
      else break;
      if (next.level === 'STATEMENT') break;
    }
    plans.push(plan);
  });
  return plans;
}

/** Which database each backend served, by node (`node<port>`) and pid. */
export type Sessions = Map<string, Map<number, string>>;

/**
 * Watches every node's backends (pg_stat_activity, read over a connection of its own to each node's `postgres`
 * database, so nothing of the measured database runs) every `everyMs` until stopped: which database each pid served.
 * A session that opens and closes between two looks is missed; its plans are then reported as unattributed.
 */
export async function watchSessions(coordinatorUrl: string, everyMs = 50): Promise<{ stop(): Promise<Sessions> }> {
  const coordinator = new URL(coordinatorUrl);
  const clients: Array<{ node: string; client: pg.Client }> = [];
  const sessions: Sessions = new Map();
  const main = connectTo(coordinator, coordinator.port);
  await main.connect();
  try {
    const { rows } = await main.query<{ nodeport: number }>('select nodeport from pg_dist_node order by nodeport');
    const ports = new Set([Number(coordinator.port), ...rows.map((r) => r.nodeport)]);
    for (const port of ports) {
      const client = connectTo(coordinator, String(port));
      await client.connect();
      clients.push({ node: `node${port}`, client });
    }
  } finally {
    await main.end();
  }
  const look = async () => {
    await Promise.all(
      clients.map(async ({ node, client }) => {
        const { rows } = await client.query<{ pid: number; datname: string }>(
          'select pid, datname from pg_stat_activity where datname is not null',
        );
        const pids = sessions.get(node) ?? new Map<number, string>();
        for (const row of rows) pids.set(row.pid, row.datname);
        sessions.set(node, pids);
      }),
    );
  };
  await look();
  let running = true;
  const loop = (async () => {
    while (running) {
      // A look every `everyMs` while the test runs: sampling, not waiting for anything.
      await new Promise((resolve) => setTimeout(resolve, everyMs));
      // A missed look only leaves a session unattributed.
      await look().catch(() => {});
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await look();
      await Promise.all(clients.map(({ client }) => client.end()));
      return sessions;
    },
  };
}

function connectTo(coordinator: URL, port: string): pg.Client {
  const url = new URL(coordinator);
  url.port = port;
  url.pathname = '/postgres';
  return new pg.Client({ connectionString: url.toString() });
}

/** A statement on one line, at most `max` characters. */
export function oneLine(text: string, max = 600): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
