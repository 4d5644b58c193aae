/**
 * Ends a run with the slowest test files (where CI time goes) and one plain line,
 * `vitest: N passed, N failed, N skipped`, that CI systems read as the result.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A file that failed to load has no tests but is a failure all the same.
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
    }
    const slowest = testModules
      .map((module) => ({ file: module.relativeModuleId, ms: module.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 12);
    if (slowest.length > 1)
      process.stdout.write(
        `\nslowest files:\n${slowest.map((s) => `  ${(s.ms / 1000).toFixed(1).padStart(6)} s  ${s.file}`).join('\n')}\n`,
      );
    process.stdout.write(`\nvitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
