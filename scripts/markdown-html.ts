/**
 * The Markdown of the contract's descriptions, as plain HTML for the reference that needs no JavaScript
 * (scripts/build-reference.ts).
 *
 * Why not a library: the project declares no Markdown renderer (`marked` is in node_modules only as a dependency
 * of a dev tool, and may go with it), and the descriptions use a small part of CommonMark and GFM: paragraphs,
 * headings, fenced code, bullet and numbered lists (nested, with code inside), tables, block quotes, rules, and
 * inline code, emphasis, strong emphasis and links. That part is rendered here; everything else is shown as text.
 * All text is HTML-escaped (descriptions write placeholders such as `<externalId>` outside code too), and raw HTML
 * in the Markdown is shown, never interpreted. Links keep only http(s), mailto, fragment and relative targets.
 */

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => escapes[c]!);
}

/** Characters Markdown lets a backslash escape; kept aside while the inline syntax is read. */
const escapable = /\\([\\`*_{}[\]()#+\-.!|<>~])/g;
const held = (i: number) => `\u{F0000}${i}\u{F0001}`;
const heldPattern = /\u{F0000}(\d+)\u{F0001}/gu;

/** A link target the page may carry: no `javascript:` or other schemes. */
function safeHref(href: string): string | undefined {
  return /^(https?:\/\/|mailto:|#|\/|\.{1,2}\/|[\w.-]+(?:[/#?]|$))/i.test(href) && !/^\s*javascript:/i.test(href)
    ? href
    : undefined;
}

/** One line (or a paragraph's lines) of inline Markdown as HTML. */
export function inlineHtml(markdown: string): string {
  const parts: string[] = [];
  const hold = (html: string) => held(parts.push(html) - 1);
  // Code spans first: nothing inside them is Markdown.
  let text = markdown.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, _ticks: string, code: string) => {
    const inner = /^ [\s\S]* $/.test(code) && code.trim() !== '' ? code.slice(1, -1) : code;
    return hold(`<code>${escapeHtml(inner.replace(/\n/g, ' '))}</code>`);
  });
  text = text.replace(escapable, (_, c: string) => hold(escapeHtml(c)));
  text = escapeHtml(text);
  text = text.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (whole, label: string, href: string) => {
    const target = safeHref(href.replace(/&amp;/g, '&'));
    return target ? hold(`<a href="${escapeHtml(target)}">${label}</a>`) : whole;
  });
  text = text.replace(/(https?:\/\/[^\s<>"'`)]+[^\s<>"'`).,;:!?])/g, (url) => hold(`<a href="${url}">${url}</a>`));
  text = text.replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>');
  text = text.replace(/__(?=\S)([\s\S]*?\S)__(?!\w)/g, '<strong>$1</strong>');
  text = text.replace(/(^|[^\w*])\*(?=[^\s*])([\s\S]*?[^\s*])\*(?![\w*])/g, '$1<em>$2</em>');
  text = text.replace(/(^|[^\w])_(?=[^\s_])([\s\S]*?[^\s_])_(?!\w)/g, '$1<em>$2</em>');
  text = text.replace(/( {2,}|\\)\n/g, '<br>\n');
  // Placeholders may hold placeholders (a link around code): restore until none is left.
  while (heldPattern.test(text)) text = text.replace(heldPattern, (_, i: string) => parts[Number(i)]!);
  return text;
}

const fenceOpen = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const heading = /^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/;
const rule = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const listItem = /^( {0,3})([-*+]|\d{1,9}[.)])( {1,4}|\t|$)(.*)$/;
const quote = /^ {0,3}> ?/;
const tableDivider = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function startsTable(lines: string[], i: number): boolean {
  return lines[i]!.includes('|') && i + 1 < lines.length && tableDivider.test(lines[i + 1]!);
}

function startsBlock(lines: string[], i: number): boolean {
  const line = lines[i]!;
  return (
    fenceOpen.test(line) ||
    heading.test(line) ||
    rule.test(line) ||
    quote.test(line) ||
    startsTable(lines, i) ||
    (listItem.test(line) && listItem.exec(line)![4]!.trim() !== '')
  );
}

/** A table row's cells: split at `|` outside code spans and not escaped; `\|` then reads as `|`. */
function cells(row: string): string[] {
  const line = row
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  const out: string[] = [];
  let cell = '';
  let ticks = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && line[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (c === '`') {
      let run = 1;
      while (line[i + run] === '`') run++;
      ticks = ticks === 0 ? run : ticks === run ? 0 : ticks;
      cell += '`'.repeat(run);
      i += run - 1;
    } else if (c === '|' && ticks === 0) {
      out.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  out.push(cell.trim());
  return out;
}

/** Markdown blocks as HTML. `headingShift` moves headings down (a `##` inside an operation is not a page section). */
export function markdownHtml(markdown: string, headingShift = 0): string {
  return blocks(markdown.replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n'), headingShift).join('\n');
}

function blocks(lines: string[], shift: number): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i++;
      continue;
    }
    const fence = fenceOpen.exec(line);
    if (fence) {
      const [, indent, marks, lang] = fence;
      const body: string[] = [];
      i++;
      while (
        i < lines.length &&
        !new RegExp(`^ {0,3}${marks![0] === '`' ? '`' : '~'}{${marks!.length},}\\s*$`).test(lines[i]!)
      )
        body.push(lines[i++]!.replace(new RegExp(`^ {0,${indent!.length}}`), ''));
      i++;
      const cls = lang ? ` class="language-${escapeHtml(lang)}"` : '';
      out.push(`<pre><code${cls}>${escapeHtml(body.join('\n'))}</code></pre>`);
      continue;
    }
    const head = heading.exec(line);
    if (head) {
      const level = Math.min(6, head[1]!.length + shift);
      out.push(`<h${level}>${inlineHtml(head[2] ?? '')}</h${level}>`);
      i++;
      continue;
    }
    if (rule.test(line)) {
      out.push('<hr>');
      i++;
      continue;
    }
    if (quote.test(line)) {
      const body: string[] = [];
      while (i < lines.length && lines[i]!.trim() !== '') body.push(lines[i++]!.replace(quote, ''));
      out.push(`<blockquote>\n${blocks(body, shift).join('\n')}\n</blockquote>`);
      continue;
    }
    if (startsTable(lines, i)) {
      const header = cells(line);
      const align = cells(lines[i + 1]!).map((c) =>
        c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : '',
      );
      const attr = (k: number) => (align[k] ? ` style="text-align:${align[k]}"` : '');
      i += 2;
      const rows: string[][] = [];
      while (i < lines.length && lines[i]!.trim() !== '' && lines[i]!.includes('|')) rows.push(cells(lines[i++]!));
      out.push(
        '<table>\n<thead><tr>' +
          header.map((c, k) => `<th${attr(k)}>${inlineHtml(c)}</th>`).join('') +
          '</tr></thead>\n<tbody>\n' +
          rows
            .map(
              (r) => '<tr>' + header.map((_, k) => `<td${attr(k)}>${inlineHtml(r[k] ?? '')}</td>`).join('') + '</tr>',
            )
            .join('\n') +
          '\n</tbody>\n</table>',
      );
      continue;
    }
    const item = listItem.exec(line);
    if (item) {
      i = list(lines, i, shift, out);
      continue;
    }
    const paragraph: string[] = [line.trim()];
    i++;
    while (i < lines.length && lines[i]!.trim() !== '' && !startsBlock(lines, i)) paragraph.push(lines[i++]!.trim());
    out.push(`<p>${inlineHtml(paragraph.join('\n'))}</p>`);
  }
  return out;
}

/** A list from line `start`: its items, each rendered as blocks of its own lines; returns the line after it. */
function list(lines: string[], start: number, shift: number, out: string[]): number {
  const first = listItem.exec(lines[start]!)!;
  const ordered = /\d/.test(first[2]!);
  const sameKind = (marker: string) => (ordered ? /\d/.test(marker) : marker === first[2]);
  const items: string[][] = [];
  let loose = false;
  let i = start;
  while (i < lines.length) {
    const m = listItem.exec(lines[i]!);
    if (!m || !sameKind(m[2]!) || m[1]!.length > first[1]!.length + 1) break;
    const width = m[1]!.length + m[2]!.length + (m[3]!.length > 4 || m[3] === '' ? 1 : m[3]!.length);
    const body = [m[4]!];
    i++;
    while (i < lines.length) {
      const next = lines[i]!;
      const indent = /^ */.exec(next)![0].length;
      if (next.trim() === '') body.push('');
      else if (indent >= width) body.push(next.slice(width));
      else if (body[body.length - 1] !== '' && !startsBlock(lines, i))
        body.push(next.trim()); // a lazy line
      else break;
      i++;
    }
    while (body.length > 1 && body[body.length - 1] === '') {
      body.pop();
      if (i < lines.length && listItem.test(lines[i]!)) loose = true;
    }
    if (body.slice(1).some((l, k) => l === '' && body[k + 2] !== undefined && body[k + 2] !== '')) loose = true;
    items.push(body);
    // A blank line between items belongs to neither; step over it when another item follows.
    let j = i;
    while (j < lines.length && lines[j]!.trim() === '') j++;
    if (j > i && j < lines.length && listItem.test(lines[j]!) && sameKind(listItem.exec(lines[j]!)![2]!)) {
      loose = true;
      i = j;
    } else if (j > i) break;
  }
  const startAt = ordered ? Number.parseInt(first[2]!, 10) : 1;
  const tag = ordered ? 'ol' : 'ul';
  out.push(`<${tag}${ordered && startAt !== 1 ? ` start="${startAt}"` : ''}>`);
  for (const body of items) {
    let html = blocks(body, shift).join('\n');
    if (!loose) html = html.replace(/^<p>([\s\S]*?)<\/p>(?=\n|$)/, '$1');
    out.push(`<li>${html}</li>`);
  }
  out.push(`</${tag}>`);
  return i;
}
