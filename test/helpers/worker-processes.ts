/**
 * The set-up of a crash test: the service in this process serves only the API (`role: 'api'`), so it never takes a
 * job, and the test starts worker processes of its own (to kill one with SIGKILL mid-job); every worker still running
 * is stopped after each test, the service after the file.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startWorkerProcess, type WorkerProcess } from '../respondents/worker-process.js';
import { startTestService, type TestService } from './service.js';

export function apiWithWorkerProcesses(): { service(): TestService; startWorker(): Promise<WorkerProcess> } {
  let t: TestService | undefined;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    t = await startTestService({ role: 'api' });
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.kill('SIGTERM');
  });
  afterAll(async () => {
    await t?.close();
  });
  return {
    service: () => t!,
    async startWorker() {
      const worker = await startWorkerProcess(t!.database.url);
      workers.push(worker);
      return worker;
    },
  };
}
