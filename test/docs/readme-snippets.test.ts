/**
 * Examples that run: every TypeScript block of the README, the SDK README and the API reference's introduction
 * type-checks against the SDK, and every shell block names only npm scripts and CLI commands that exist.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { markdownSnippets, markdownSnippetsOf } from '../helpers/markdown-snippets.js';
import { typeCheck } from '../helpers/typecheck.js';

/**
 * Names a snippet may use without defining them (the value it works on), declared for the check only when the
 * snippet does not define them itself.
 */
const givens: Record<string, string> = {
  client: "import('@survey-service/sdk').SurveyServiceClient",
  surveyId: 'string',
  lastExportId: 'string',
};

function withGivens(code: string): string {
  const declared = Object.entries(givens).filter(
    ([name]) => new RegExp(`\\b${name}\\b`).test(code) && !new RegExp(`\\b(const|let|var)\\s+${name}\\b`).test(code),
  );
  return [...declared.map(([name, type]) => `declare const ${name}: ${type};`), code, 'export {};'].join('\n');
}

const packageScripts = Object.keys(
  (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts,
);
const cliSource = readFileSync('scripts/cli.ts', 'utf8');
const cliCommands = [...cliSource.matchAll(/case '([a-z-]+ [a-z-]+)':/g)].map((m) => m[1]!);

describe.each(['README.md', 'sdk/README.md'])('%s', (file) => {
  const snippets = markdownSnippets(file);

  it('has TypeScript blocks that type-check', { timeout: 120_000 }, () => {
    const ts = snippets.filter((s) => s.lang === 'ts' || s.lang === 'typescript');
    expect(ts.length).toBeGreaterThan(0);
    expect(typeCheck(ts.map((s) => ({ name: `${file}:${s.line}`, code: withGivens(s.code) })))).toEqual([]);
  });

  it('has shell blocks that use only existing npm scripts and CLI commands', () => {
    for (const snippet of snippets.filter((s) => s.lang === 'sh')) {
      for (const match of snippet.code.matchAll(/npm run ([a-z:-]+)/g))
        expect(packageScripts, `${file}:${snippet.line}`).toContain(match[1]);
      for (const match of snippet.code.matchAll(/npm run cli -- ([a-z-]+ [a-z-]+)/g))
        expect(cliCommands, `${file}:${snippet.line}`).toContain(match[1]);
      expect(snippet.code, `${file}:${snippet.line}: uuidgen is not on Debian by default`).not.toMatch(/\buuidgen\b/);
    }
  });
});

it('the CLI command list is read from the CLI (so the shell check above can fail)', () => {
  expect(cliCommands).toEqual(expect.arrayContaining(['orgs create', 'orgs list', 'keys create', 'keys revoke']));
});

it("the API reference's getting-started TypeScript blocks type-check", { timeout: 120_000 }, () => {
  const document = JSON.parse(readFileSync('openapi/bundled/openapi.json', 'utf8')) as {
    info: { description: string };
  };
  const ts = markdownSnippetsOf(document.info.description).filter((s) => s.lang === 'ts');
  expect(ts.length).toBeGreaterThan(0);
  expect(typeCheck(ts.map((s) => ({ name: `info.description:${s.line}`, code: withGivens(s.code) })))).toEqual([]);
});

it('names the client-side variables the same way in the READMEs, the reference and its samples', () => {
  const texts = ['README.md', 'sdk/README.md', 'openapi/bundled/openapi.json', 'docs/CHANGELOG.md'].map((file) =>
    readFileSync(file, 'utf8'),
  );
  const names = new Set(texts.flatMap((text) => [...text.matchAll(/\bSURVEY_[A-Z_]+\b/g)].map((m) => m[0])));
  expect([...names].sort()).toEqual(['SURVEY_API_BASE_URL', 'SURVEY_API_KEY', 'SURVEY_WEBHOOK_SECRET']);
});
