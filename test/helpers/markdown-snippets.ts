/** The fenced code blocks of a markdown file, with their language and the line they start on. */
import { readFileSync } from 'node:fs';

export interface Snippet {
  lang: string;
  code: string;
  line: number;
}

export function markdownSnippets(file: string): Snippet[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const snippets: Snippet[] = [];
  let open: { lang: string; line: number; body: string[] } | undefined;
  lines.forEach((text, index) => {
    const fence = /^```(\S*)\s*$/.exec(text);
    if (!fence) {
      open?.body.push(text);
      return;
    }
    if (open) {
      snippets.push({ lang: open.lang, code: open.body.join('\n'), line: open.line });
      open = undefined;
    } else {
      open = { lang: fence[1]!, line: index + 1, body: [] };
    }
  });
  return snippets;
}
