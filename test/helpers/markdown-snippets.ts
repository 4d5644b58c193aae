/** The fenced code blocks of markdown, with their language and the line they start on (indented fences too). */
import { readFileSync } from 'node:fs';

export interface Snippet {
  lang: string;
  code: string;
  line: number;
}

export function markdownSnippetsOf(markdown: string): Snippet[] {
  const snippets: Snippet[] = [];
  let open: { lang: string; line: number; indent: number; body: string[] } | undefined;
  markdown.split('\n').forEach((text, index) => {
    const fence = /^(\s*)```(\S*)\s*$/.exec(text);
    if (!fence) {
      open?.body.push(text.slice(Math.min(open.indent, text.length - text.trimStart().length)));
      return;
    }
    if (open) {
      snippets.push({ lang: open.lang, code: open.body.join('\n'), line: open.line });
      open = undefined;
    } else {
      open = { lang: fence[2]!, line: index + 1, indent: fence[1]!.length, body: [] };
    }
  });
  return snippets;
}

export function markdownSnippets(file: string): Snippet[] {
  return markdownSnippetsOf(readFileSync(file, 'utf8'));
}
