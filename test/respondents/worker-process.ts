/**
 * A worker as ONE OS process (`node --import tsx server/src/main.ts --role worker`), so that SIGKILL hits the
 * process that runs the jobs. (The tsx CLI would run the server in a grandchild that survives the kill.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { repoRoot } from '../helpers/process.js';

export interface WorkerProcess {
  child: ChildProcess;
  exited: Promise<void>;
  kill(signal: NodeJS.Signals): Promise<void>;
  output(): string;
}

export async function startWorkerProcess(databaseUrl: string): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts', '--role', 'worker'], {
    cwd: repoRoot,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start within 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/^Worker: /m.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`worker exited during start-up:\n${output}`));
    });
  });
  return {
    child,
    exited,
    output: () => output,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
