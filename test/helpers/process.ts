/**
 * The service as a separate OS process (`node --import tsx server/src/main.ts`), for what an in-process server
 * cannot show: several processes sharing one database, start-up output, signals, crashes. One process, not the
 * tsx CLI (which runs the script in a grandchild): a SIGKILL must hit the process that does the work.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ServiceProcess {
  child: ChildProcess;
  /** API base URL (absent for `--role worker`). */
  url: string | undefined;
  output(): string;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function runTsx(script: string, args: string[], env: Record<string, string | undefined>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: repoRoot,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export async function startServiceProcess(options: {
  databaseUrl: string;
  role?: 'all' | 'api' | 'worker';
  env?: Record<string, string | undefined>;
}): Promise<ServiceProcess> {
  const role = options.role ?? 'all';
  const child = runTsx('server/src/main.ts', ['--role', role], {
    DATABASE_URL: options.databaseUrl,
    PORT: '0',
    PUBLIC_BASE_URL: undefined,
    ...options.env,
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const url = await new Promise<string | undefined>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service process did not start within 60 s:\n${output}`)), 60_000);
    const check = () => {
      const api = /^API: (http:\/\/\S+)\/api\/v1$/m.exec(output);
      // Docs: is the last line a starting API process prints.
      if (api && /^Docs: /m.test(output)) return done(api[1]);
      if (role === 'worker' && /^Worker: /m.test(output)) return done(undefined);
    };
    const done = (value: string | undefined) => {
      clearTimeout(timer);
      child.stdout!.off('data', check);
      child.stderr!.off('data', check);
      resolve(value);
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service process exited with ${code} during start-up:\n${output}`));
    });
  });

  return {
    child,
    url,
    output: () => output,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
