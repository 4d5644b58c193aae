/**
 * The reference without JavaScript, built with the Redoc page by `npm run docs` (scripts/build-docs.ts):
 *
 * - `reference.html`, served at /docs/reference: every operation and webhook — summary, description, scopes,
 *   parameters, request body, responses, code samples and examples — the component schemas with their fields and
 *   the shared responses, as plain semantic HTML with a little inline CSS and no script. It is what `curl`, a text
 *   browser, a screen reader on a slow phone or a crawler gets, since the Redoc page draws its operations in script.
 * - `llms.txt`, served at /docs/llms.txt: the same document as one Markdown text file, for tools and language
 *   models (the llms.txt convention: a title, a one-line summary, then the details).
 *
 * Both come from one walk of the bundled contract through two writers, so they cannot disagree. Why not a
 * converter such as widdershins or @scalar/openapi-to-markdown: none is a dependency of the project, their output
 * would still need a Markdown renderer for the HTML (see scripts/markdown-html.ts), and the walk is short.
 */
import { escapeHtml, inlineHtml, markdownHtml } from './markdown-html.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the contract is read as plain JSON */
type Json = any;

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/** What the walk says; each writer turns it into its format. Text arguments are inline Markdown. */
interface Writer {
  heading(level: number, text: string, id: string): void;
  /** A block of the contract's Markdown, its headings moved `shift` levels down. */
  markdown(text: string, shift?: number): void;
  paragraph(text: string): void;
  table(headers: string[], rows: string[][]): void;
  code(lang: string, source: string, caption?: string): void;
  /** A mention of a component schema or response (a link in HTML). */
  link(kind: 'schema' | 'response', name: string): string;
  /** A list of links to sections of the document. */
  contents(entries: { text: string; id: string; children?: { text: string; id: string }[] }[]): void;
}

/** A table cell or a one-line mention: the Markdown's lines joined. */
const oneLine = (text: string | undefined) => (text ?? '').replace(/\s*\n\s*/g, ' ').trim();
/** The first sentence, for things described in full elsewhere on the page (shared responses and headers). */
const firstSentence = (text: string | undefined) => {
  const line = oneLine(text);
  const end = /\.(\s|$)/.exec(line.replace(/`[^`]*`/g, (c) => 'x'.repeat(c.length)));
  return end ? line.slice(0, end.index + 1) : line;
};
const code = (text: string) => {
  const ticks = text.includes('`') ? '`` ' : '`';
  return `${ticks}${text}${ticks.split('').reverse().join('')}`;
};
const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

export const ids = {
  tag: (name: string) => `tag-${slug(name)}`,
  schema: (name: string) => `schema-${name}`,
  response: (name: string) => `response-${name}`,
};

class MarkdownWriter implements Writer {
  readonly out: string[] = [];
  heading(level: number, text: string): void {
    this.out.push(`${'#'.repeat(level)} ${text}`, '');
  }
  markdown(text: string, shift = 2): void {
    let fenced = false;
    const lines = text
      .trim()
      .split('\n')
      .map((line) => {
        if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
        return !fenced && /^ {0,3}#{1,6}\s/.test(line) ? `${'#'.repeat(shift)}${line.trimStart()}` : line;
      });
    if (text.trim()) this.out.push(lines.join('\n'), '');
  }
  paragraph(text: string): void {
    if (text.trim()) this.out.push(text.trim(), '');
  }
  table(headers: string[], rows: string[][]): void {
    const cell = (text: string) => oneLine(text).replace(/\|/g, '\\|') || ' ';
    this.out.push(`| ${headers.map(cell).join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`);
    for (const row of rows) this.out.push(`| ${headers.map((_, k) => cell(row[k] ?? '')).join(' | ')} |`);
    this.out.push('');
  }
  code(lang: string, source: string, caption?: string): void {
    if (caption) this.out.push(`${caption}:`, '');
    const fence = source.includes('```') ? '````' : '```';
    this.out.push(`${fence}${lang}`, source.replace(/\n$/, ''), fence, '');
  }
  link(_kind: 'schema' | 'response', name: string): string {
    return code(name);
  }
  contents(): void {
    // A text reader has the headings; the table of contents is the HTML page's.
  }
}

class HtmlWriter implements Writer {
  readonly out: string[] = [];
  private open: number[] = [];
  heading(level: number, text: string, id: string): void {
    // Each heading opens a section that runs to the next heading of its level or above.
    while (this.open.length > 0 && this.open[this.open.length - 1]! >= level) {
      this.open.pop();
      this.out.push('</section>');
    }
    this.open.push(level);
    this.out.push(`<section id="${escapeHtml(id)}">`, `<h${level}>${inlineHtml(text)}</h${level}>`);
  }
  markdown(text: string, shift = 2): void {
    if (text.trim()) this.out.push(markdownHtml(text, shift));
  }
  paragraph(text: string): void {
    if (text.trim()) this.out.push(`<p>${inlineHtml(text)}</p>`);
  }
  table(headers: string[], rows: string[][]): void {
    this.out.push(
      '<table>',
      `<thead><tr>${headers.map((h) => `<th scope="col">${inlineHtml(h)}</th>`).join('')}</tr></thead>`,
      '<tbody>',
      ...rows.map((row) => `<tr>${headers.map((_, k) => `<td>${inlineHtml(oneLine(row[k]))}</td>`).join('')}</tr>`),
      '</tbody>',
      '</table>',
    );
  }
  code(lang: string, source: string, caption?: string): void {
    const pre = `<pre><code class="language-${escapeHtml(lang || 'text')}">${escapeHtml(source.replace(/\n$/, ''))}</code></pre>`;
    this.out.push(caption ? `<figure><figcaption>${inlineHtml(caption)}</figcaption>${pre}</figure>` : pre);
  }
  link(kind: 'schema' | 'response', name: string): string {
    return `[${code(name)}](#${ids[kind](name)})`;
  }
  contents(entries: { text: string; id: string; children?: { text: string; id: string }[] }[]): void {
    const item = (e: { text: string; id: string }) => `<a href="#${escapeHtml(e.id)}">${inlineHtml(e.text)}</a>`;
    this.out.push(
      '<nav aria-label="Contents">',
      '<h2>Contents</h2>',
      '<ul>',
      ...entries.map(
        (e) =>
          `<li>${item(e)}${e.children?.length ? `<ul>${e.children.map((c) => `<li>${item(c)}</li>`).join('')}</ul>` : ''}</li>`,
      ),
      '</ul>',
      '</nav>',
    );
  }
  close(): void {
    while (this.open.pop() !== undefined) this.out.push('</section>');
  }
}

/** The walk: the document, in the same order for both writers. */
class Walk {
  constructor(
    private readonly doc: Json,
    private readonly w: Writer,
  ) {}

  private resolve(value: Json): { value: Json; name?: string } {
    let name: string | undefined;
    const seen = new Set<string>();
    while (value && typeof value.$ref === 'string' && value.$ref.startsWith('#/') && !seen.has(value.$ref)) {
      seen.add(value.$ref);
      name = value.$ref.split('/').pop();
      value = value.$ref
        .slice(2)
        .split('/')
        .map((p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce((node: Json, key: string) => node?.[key], this.doc);
    }
    return { value, name };
  }

  /** A schema's type, in a few words: component schemas by name, the rest spelled out. */
  private typeOf(schema: Json, depth = 0): string {
    if (!schema || typeof schema !== 'object') return 'any';
    if (typeof schema.$ref === 'string') {
      const name = schema.$ref.split('/').pop()!;
      return schema.$ref.startsWith('#/components/schemas/') ? this.w.link('schema', name) : code(name);
    }
    if (depth > 4) return '…';
    const variants = (key: string, word: string) =>
      Array.isArray(schema[key]) ? `${word} ${schema[key].map((s: Json) => this.typeOf(s, depth + 1)).join(', ')}` : '';
    const alternatives = variants('oneOf', 'one of') || variants('anyOf', 'any of') || variants('allOf', 'all of');
    if ('const' in schema) return `${code(JSON.stringify(schema.const))}`;
    const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
    const named = types.map((type) => {
      if (type === 'array') return `array of ${this.typeOf(schema.items, depth + 1)}`;
      if (type === 'object' && schema.additionalProperties && typeof schema.additionalProperties === 'object')
        return `map of ${this.typeOf(schema.additionalProperties, depth + 1)}`;
      return schema.format && type !== 'null' ? `${type} (${schema.format})` : type;
    });
    let text = [...named, ...(alternatives ? [alternatives] : [])].join(' or ') || (alternatives ? '' : 'any');
    if (Array.isArray(schema.enum))
      text = `${text ? `${text}, ` : ''}one of ${schema.enum.map((v: unknown) => code(JSON.stringify(v))).join(', ')}`;
    return text;
  }

  /** The bounds and defaults of a schema, as a sentence to follow its description. */
  private constraints(schema: Json): string {
    if (!schema || typeof schema !== 'object' || schema.$ref) return '';
    const parts: string[] = [];
    const range = (min: unknown, max: unknown, what: string) => {
      if (min !== undefined && max !== undefined) parts.push(`${what} ${min} to ${max}`);
      else if (min !== undefined) parts.push(`${what} at least ${min}`);
      else if (max !== undefined) parts.push(`${what} at most ${max}`);
    };
    range(schema.minimum, schema.maximum, 'Value');
    if (schema.exclusiveMinimum !== undefined) parts.push(`Value above ${schema.exclusiveMinimum}`);
    if (schema.exclusiveMaximum !== undefined) parts.push(`Value below ${schema.exclusiveMaximum}`);
    range(schema.minLength, schema.maxLength, 'Length');
    range(schema.minItems, schema.maxItems, 'Items');
    range(schema.minProperties, schema.maxProperties, 'Members');
    if (schema.uniqueItems) parts.push('Items distinct');
    if (schema.pattern) parts.push(`Pattern ${code(schema.pattern)}`);
    if (schema.default !== undefined) parts.push(`Default ${code(JSON.stringify(schema.default))}`);
    if (schema.readOnly) parts.push('Read-only');
    if (schema.deprecated) parts.push('Deprecated');
    return parts.length ? `${parts.join('. ')}.` : '';
  }

  private describe(description: string | undefined, schema: Json): string {
    return [oneLine(description), this.constraints(schema)].filter(Boolean).join(' ');
  }

  /** The fields of an object schema, nested inline objects as `a.b` and `a[].b`. */
  private fieldRows(schema: Json, prefix = '', depth = 0): string[][] {
    const rows: string[][] = [];
    if (!schema || typeof schema !== 'object' || depth > 4) return rows;
    const required = new Set<string>(Array.isArray(schema.required) ? schema.required : []);
    for (const [name, property] of Object.entries<Json>(schema.properties ?? {})) {
      const full = `${prefix}${name}`;
      rows.push([
        code(full),
        this.typeOf(property),
        required.has(name) ? 'yes' : '',
        this.describe(property?.description, property),
      ]);
      if (property && !property.$ref && property.properties)
        rows.push(...this.fieldRows(property, `${full}.`, depth + 1));
      const items = property?.items;
      if (items && !items.$ref && items.properties) rows.push(...this.fieldRows(items, `${full}[].`, depth + 1));
    }
    return rows;
  }

  /** A schema's shape: its type when it is not a plain object, its fields when it has some. */
  private schema(schema: Json): void {
    const { value, name } = this.resolve(schema);
    if (!value) return;
    if (name && schema.$ref) this.w.paragraph(`Schema: ${this.typeOf(schema)}.`);
    const rows = this.fieldRows(value);
    const kind = this.typeOf({ ...value, properties: undefined });
    if (rows.length === 0 || value.oneOf || value.anyOf || value.allOf) {
      const line = [`Type: ${kind}.`, this.constraints(value)].filter(Boolean).join(' ');
      this.w.paragraph(line);
    }
    if (value.discriminator?.propertyName) {
      const mapping = Object.entries<string>(value.discriminator.mapping ?? {})
        .map(([key, ref]) => `${code(key)} → ${this.typeOf({ $ref: ref })}`)
        .join(', ');
      this.w.paragraph(`Told apart by ${code(value.discriminator.propertyName)}${mapping ? `: ${mapping}` : ''}.`);
    }
    if (rows.length > 0) this.w.table(['field', 'type', 'required', 'description'], rows);
    if (value.additionalProperties === false && rows.length > 0) this.w.paragraph('No other fields.');
  }

  private examples(media: Json, what: string): void {
    const write = (value: unknown, caption: string) =>
      this.w.code(
        typeof value === 'string' ? 'text' : 'json',
        typeof value === 'string' ? value : JSON.stringify(value, null, 2),
        caption,
      );
    if (media.example !== undefined) write(media.example, `Example ${what}`);
    for (const [key, example] of Object.entries<Json>(media.examples ?? {})) {
      const { value } = this.resolve(example);
      if (value?.value !== undefined)
        write(
          value.value,
          `Example ${what}: ${oneLine(value.summary) || key}${value.description ? ` — ${oneLine(value.description)}` : ''}`,
        );
    }
  }

  private content(content: Json, what: string): void {
    for (const [type, media] of Object.entries<Json>(content ?? {})) {
      this.w.paragraph(`Media type: ${code(type)}.`);
      if (media?.schema) this.schema(media.schema);
      if (media) this.examples(media, what);
    }
  }

  private parameters(pathItem: Json, operation: Json): Json[] {
    const all = [...(pathItem?.parameters ?? []), ...(operation.parameters ?? [])].map((p) => this.resolve(p).value);
    const byKey = new Map<string, Json>();
    for (const p of all) if (p) byKey.set(`${p.in}:${p.name}`, p);
    return [...byKey.values()];
  }

  private scopes(operation: Json): string {
    const security: Json[] = operation.security ?? this.doc.security ?? [];
    if (security.length === 0) return 'none: public, no API key';
    return security
      .map((requirement) =>
        Object.entries<string[]>(requirement)
          .map(
            ([scheme, scopes]) =>
              `${code(scheme)}${scopes.length ? ` with scope ${scopes.map(code).join(' or ')}` : ''}`,
          )
          .join(' and '),
      )
      .join('; or ');
  }

  operation(method: string, path: string, pathItem: Json, operation: Json, level: number): void {
    const w = this.w;
    const id = operation.operationId ?? slug(`${method} ${path}`);
    w.heading(level, `${code(`${method.toUpperCase()} ${path}`)} — ${operation.summary ?? id}`, id);
    w.paragraph(
      `Operation ${code(id)}. Authorization: ${this.scopes(operation)}.${operation.deprecated ? ' Deprecated.' : ''}`,
    );
    w.markdown(operation.description ?? '');

    const parameters = this.parameters(pathItem, operation);
    if (parameters.length > 0) {
      w.heading(level + 1, 'Parameters', `${id}-parameters`);
      w.table(
        ['name', 'in', 'type', 'required', 'description'],
        parameters.map((p) => [
          code(p.name),
          p.in,
          this.typeOf(p.schema ?? p.content?.[Object.keys(p.content ?? {})[0] ?? '']?.schema),
          p.required ? 'yes' : '',
          this.describe(p.description, p.schema),
        ]),
      );
    }

    const body = operation.requestBody && this.resolve(operation.requestBody).value;
    if (body) {
      w.heading(level + 1, 'Request body', `${id}-request`);
      w.paragraph(
        `${body.required ? 'Required' : 'Optional'}.${body.description ? ` ${oneLine(body.description)}` : ''}`,
      );
      this.content(body.content, 'request');
    }

    const responses = Object.entries<Json>(operation.responses ?? {});
    if (responses.length > 0) {
      w.heading(level + 1, 'Responses', `${id}-responses`);
      w.table(
        ['status', 'description', 'body'],
        responses.map(([status, response]) => {
          const { value, name } = this.resolve(response);
          const shared = name && response.$ref ? `${w.link('response', name)}: ` : '';
          // A shared response's body and headers are under "Shared responses", linked by its name.
          const bodies = Object.entries<Json>(shared ? {} : (value?.content ?? {}))
            .map(([type, media]) => `${code(type)}${media?.schema ? ` ${this.typeOf(media.schema)}` : ''}`)
            .join(', ');
          const said = shared ? firstSentence(value?.description) : oneLine(value?.description);
          return [code(status), `${shared}${said}`, bodies];
        }),
      );
      for (const [status, response] of responses) {
        if (response.$ref) continue; // shared responses are written out once, under "Shared responses"
        this.responseDetails(response, `${id}-${status}`, `${code(status)}`, level + 2);
      }
    }

    const samples: Json[] = operation['x-codeSamples'] ?? [];
    if (samples.length > 0) {
      w.heading(level + 1, 'Samples', `${id}-samples`);
      for (const sample of samples) {
        const lang = String(sample.lang ?? '').toLowerCase();
        w.code(
          lang === 'shell' ? 'sh' : lang === 'typescript' ? 'ts' : lang,
          sample.source ?? '',
          sample.label ?? sample.lang,
        );
      }
    }
  }

  private responseDetails(response: Json, id: string, title: string, level: number): void {
    const headers = Object.entries<Json>(response.headers ?? {});
    if (!response.content && headers.length === 0) return;
    this.w.heading(level, title, id);
    if (headers.length > 0)
      this.w.table(
        ['header', 'type', 'description'],
        headers.map(([name, header]) => {
          const { value } = this.resolve(header);
          const said = header.$ref ? firstSentence(value?.description) : value?.description;
          return [code(name), this.typeOf(value?.schema), this.describe(said, value?.schema)];
        }),
      );
    if (response.content) this.content(response.content, 'response');
  }

  run(): void {
    const { doc, w } = this;
    const info = doc.info ?? {};
    const title = info.title ?? 'API reference';
    const tags: Json[] = doc.tags ?? [];
    type Entry = { method: string; path: string; item: Json; op: Json };
    const byTag = new Map<string, Entry[]>();
    for (const tag of tags) byTag.set(tag.name, []);
    for (const [path, item] of Object.entries<Json>(doc.paths ?? {}))
      for (const method of methods)
        if (item?.[method]) {
          const tag = item[method].tags?.[0] ?? 'Other';
          if (!byTag.has(tag)) byTag.set(tag, []);
          byTag.get(tag)!.push({ method, path, item, op: item[method] });
        }
    const webhooks: Entry[] = Object.entries<Json>(doc.webhooks ?? {}).flatMap(([name, item]) =>
      methods.filter((m) => item?.[m]).map((method) => ({ method, path: name, item, op: item[method] })),
    );
    const entry = (e: Entry) => ({
      text: `${code(`${e.method.toUpperCase()} ${e.path}`)} ${e.op.summary ?? ''}`,
      id: e.op.operationId ?? slug(`${e.method} ${e.path}`),
    });
    const schemas = Object.entries<Json>(doc.components?.schemas ?? {});
    const responses = Object.entries<Json>(doc.components?.responses ?? {});

    w.heading(1, `${title}${info.version ? ` ${info.version}` : ''}`, 'top');
    w.markdown(
      `> ${oneLine(info.summary) || `The ${title}: every operation, webhook and schema of its OpenAPI ${doc.openapi ?? ''} contract.`}`,
    );
    w.contents([
      { text: 'Introduction', id: 'introduction' },
      { text: 'Servers and authentication', id: 'servers' },
      ...[...byTag]
        .filter(([, e]) => e.length > 0)
        .map(([tag, e]) => ({ text: tag, id: ids.tag(tag), children: e.map(entry) })),
      ...(webhooks.length ? [{ text: 'Webhook events', id: 'webhook-events', children: webhooks.map(entry) }] : []),
      ...(schemas.length ? [{ text: 'Schemas', id: 'schemas' }] : []),
      ...(responses.length ? [{ text: 'Shared responses', id: 'shared-responses' }] : []),
    ]);

    w.heading(2, 'Introduction', 'introduction');
    w.markdown(info.description ?? '', 1);

    w.heading(2, 'Servers and authentication', 'servers');
    w.table(
      ['server', 'description'],
      (doc.servers ?? []).map((s: Json) => [code(s.url), oneLine(s.description)]),
    );
    const schemes = Object.entries<Json>(doc.components?.securitySchemes ?? {});
    if (schemes.length > 0)
      w.table(
        ['security scheme', 'kind', 'description'],
        schemes.map(([name, s]) => [
          code(name),
          [s.type, s.scheme, s.in && `in ${s.in}`, s.name && code(s.name), s.bearerFormat && `(${s.bearerFormat})`]
            .filter(Boolean)
            .join(' '),
          oneLine(s.description),
        ]),
      );

    const tagInfo = new Map(tags.map((t) => [t.name, t]));
    for (const [tag, entries] of byTag) {
      if (entries.length === 0) continue;
      w.heading(2, tag, ids.tag(tag));
      w.markdown(tagInfo.get(tag)?.description ?? '');
      for (const e of entries) this.operation(e.method, e.path, e.item, e.op, 3);
    }

    if (webhooks.length > 0) {
      w.heading(2, 'Webhook events', 'webhook-events');
      w.paragraph('Requests this service sends to your webhook endpoints; each is named by its event type.');
      for (const e of webhooks) this.operation(e.method, e.path, e.item, e.op, 3);
    }

    if (schemas.length > 0) {
      w.heading(2, 'Schemas', 'schemas');
      for (const [name, schema] of schemas) {
        w.heading(3, code(name), ids.schema(name));
        w.markdown(schema?.description ?? '');
        this.schema(schema);
      }
    }

    if (responses.length > 0) {
      w.heading(2, 'Shared responses', 'shared-responses');
      for (const [name, response] of responses) {
        w.heading(3, code(name), ids.response(name));
        w.markdown(response?.description ?? '');
        this.responseDetails(response, `${ids.response(name)}-details`, 'Headers and body', 4);
      }
    }
  }
}

const style = `
body{font:16px/1.5 system-ui,sans-serif;color:#1a1a1a;background:#fff;max-width:72rem;margin:0 auto;padding:0 1rem 4rem}
header{border-bottom:1px solid #ddd;margin-bottom:1rem}
h1,h2,h3,h4,h5{line-height:1.25}h2{border-top:2px solid #32329f;padding-top:.5rem;margin-top:3rem}
h3{margin-top:2.5rem}section>h3{border-bottom:1px solid #ddd}
code{font:.9em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f3f3f6;padding:0 .2em;border-radius:3px}
pre{background:#f6f6f9;border:1px solid #e2e2ea;padding:.75rem;overflow:auto;max-height:40rem}pre code{background:none;padding:0}
table{border-collapse:collapse;margin:.5rem 0 1rem;width:100%;display:block;overflow-x:auto}
th,td{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f6f6f9}
figure{margin:0 0 1rem}figcaption{font-weight:600;margin:.5rem 0 .25rem}
nav ul ul{font-size:.9em}a{color:#2b2b9a}
@media (prefers-color-scheme:dark){body{color:#e8e8e8;background:#16161c}a{color:#a9a9ff}
code,pre,th{background:#23232d}pre,th,td{border-color:#3a3a48}}
`;

export interface Reference {
  html: string;
  markdown: string;
}

/** Both forms of the reference, from the bundled contract. */
export function renderReference(document: Json): Reference {
  const markdown = new MarkdownWriter();
  new Walk(document, markdown).run();
  const html = new HtmlWriter();
  new Walk(document, html).run();
  html.close();
  const title = escapeHtml(document.info?.title ?? 'API reference');
  return {
    markdown: `${markdown.out.join('\n').trim()}\n`,
    html: `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} — reference</title>
<link rel="icon" href="data:,">
<style>${style}</style>
</head>
<body>
<header>
<p>This is the reference as plain HTML: it needs no JavaScript. Also: <a href="../docs">the interactive reference</a>,
<a href="llms.txt">the reference as one Markdown text file</a>, <a href="../api/v1/openapi.json">the OpenAPI document</a>.</p>
</header>
<main>
${html.out.join('\n')}
</main>
</body>
</html>
`,
  };
}
