/**
 * The analytics benchmark's client, in a process of its own: BENCH_WARMUP untimed (the analytics bench sets it; 20 when
 * run alone) GETs of BENCH_URL with
 * BENCH_KEY (a fresh process's first requests, and a service's first requests of a route, pay for connecting and
 * compiling), then BENCH_COUNT sequential
 * timed ones; prints their latencies (ms) as JSON. Fails on any non-2xx answer.
 */
const url = process.env.BENCH_URL!;
const warmup = Number(process.env.BENCH_WARMUP ?? 20);
const count = Number(process.env.BENCH_COUNT ?? 1);
const times: number[] = [];
for (let i = 0; i < warmup + count; i++) {
  const start = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${process.env.BENCH_KEY}` } });
  const body = await response.text();
  if (i >= warmup) times.push(performance.now() - start);
  if (!response.ok) {
    console.error(`${response.status} ${body.slice(0, 500)}`);
    process.exit(1);
  }
}
process.stdout.write(JSON.stringify(times));
