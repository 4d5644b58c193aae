/**
 * `redocly lint` (recommended ruleset plus the rules of `redocly.yaml`) finds no error and no warning.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from './document.js';

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: Array<{
    ruleId: string;
    severity: string;
    message: string;
    location: Array<{ source: { ref: string } | string; pointer?: string }>;
  }>;
}

describe('redocly lint', () => {
  it('passes with zero errors and zero warnings', () => {
    const result = spawnSync(
      join(root, 'node_modules', '.bin', 'redocly'),
      ['lint', 'openapi/openapi.yaml', '--format=json'],
      {
        cwd: root,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    const start = result.stdout.indexOf('{');
    expect(start, `no JSON report; stderr: ${result.stderr}`).toBeGreaterThanOrEqual(0);
    const report = JSON.parse(result.stdout.slice(start)) as LintReport;
    const problems = report.problems.map((p) => {
      const where = p.location[0];
      const file = where ? (typeof where.source === 'string' ? where.source : where.source.ref) : '?';
      return `${p.severity} ${p.ruleId} ${file}${where?.pointer ?? ''}: ${p.message}`;
    });
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(result.status).toBe(0);
  }, 120_000);
});
