/**
 * The outage benchmark's load generator, in a process of its own: BENCH_WORKERS loops submit responses to
 * BENCH_URL's survey BENCH_SURVEY, each retried with its Idempotency-Key (after a 503, a broken connection or 409
 * idempotency_in_progress, 50 ms apart) until acknowledged, as a careful client does. On SIGTERM it finishes the
 * submissions under way and prints, as JSON, when each was acknowledged and every status it met.
 */
const url = process.env.BENCH_URL!;
const key = process.env.BENCH_KEY!;
const surveyId = process.env.BENCH_SURVEY!;
const workers = Number(process.env.BENCH_WORKERS ?? 4);

const acknowledged: Array<{ at: number; id: string }> = [];
const statuses: Record<string, number> = {};
const count = (status: string) => (statuses[status] = (statuses[status] ?? 0) + 1);
let stopping = false;
process.on('SIGTERM', () => (stopping = true));

async function loop(): Promise<void> {
  while (!stopping) {
    const idempotencyKey = crypto.randomUUID();
    const body = JSON.stringify({ answers: [{ questionId: 'q_1', value: acknowledged.length % 11 }] });
    for (;;) {
      try {
        const response = await fetch(`${url}/api/v1/surveys/${surveyId}/responses`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'idempotency-key': idempotencyKey,
          },
          body,
          signal: AbortSignal.timeout(15_000),
        });
        count(String(response.status));
        if (response.status === 201 || response.status === 200) {
          acknowledged.push({ at: Date.now(), id: ((await response.json()) as { data: { id: string } }).data.id });
          break;
        }
        await response.arrayBuffer();
      } catch (error) {
        count(`network: ${String((error as Error).cause ?? error)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

await Promise.all(Array.from({ length: workers }, loop));
process.stdout.write(JSON.stringify({ acknowledged, statuses }));
