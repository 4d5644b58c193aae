/**
 * Type-checks code that is not in a file of the repository (README snippets, generated code samples) as if it
 * were a module at the repository's root: the root tsconfig's options, `@survey-service/sdk` resolved to the
 * SDK's sources. Returns one message per diagnostic, naming the snippet and line.
 */
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(import.meta.dirname, '../..');

export function typeCheck(snippets: Array<{ name: string; code: string }>): string[] {
  const config = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const files = new Map(
    snippets.map((s, i) => [path.join(root, `.snippet-${i}-${s.name.replace(/[^a-z0-9]+/gi, '-')}.ts`), s]),
  );
  const host = ts.createCompilerHost(parsed.options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, onError, shouldCreate) => {
    const snippet = files.get(path.resolve(fileName));
    return snippet
      ? ts.createSourceFile(fileName, snippet.code, language)
      : getSourceFile(fileName, language, onError, shouldCreate);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => files.has(path.resolve(fileName)) || fileExists(fileName);
  const program = ts.createProgram([...files.keys()], { ...parsed.options, noEmit: true, noUnusedLocals: false }, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file && files.has(path.resolve(d.file.fileName)))
    .map((d) => {
      const snippet = files.get(path.resolve(d.file!.fileName))!;
      const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
      return `${snippet.name}:${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
}
