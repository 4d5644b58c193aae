/** A worker as its own OS process, for crash tests: SIGKILL hits the process that runs the jobs. */
import type { ChildProcess } from 'node:child_process';
import { startServiceProcess } from '../helpers/process.js';

export interface WorkerProcess {
  child: ChildProcess;
  exited: Promise<void>;
  kill(signal: NodeJS.Signals): Promise<void>;
  output(): string;
}

export async function startWorkerProcess(databaseUrl: string): Promise<WorkerProcess> {
  const worker = await startServiceProcess({ databaseUrl, role: 'worker' });
  return {
    child: worker.child,
    exited: worker.exited.then(() => undefined),
    output: worker.output,
    async kill(signal) {
      await worker.stop(signal);
    },
  };
}
