/** The Markdown renderer of the reference without JavaScript, on the constructs the contract's descriptions use. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultBundle } from '../../scripts/build-docs.js';
import { inlineHtml, markdownHtml } from '../../scripts/markdown-html.js';

describe('markdownHtml', () => {
  it('escapes text and raw HTML, in and out of code', () => {
    expect(inlineHtml('send `GET /x?version=<n>` for <externalId> & <script>x</script>')).toBe(
      'send <code>GET /x?version=&lt;n&gt;</code> for &lt;externalId&gt; &amp; &lt;script&gt;x&lt;/script&gt;',
    );
  });

  it('renders emphasis, strong, links and bare URLs, and refuses script links', () => {
    expect(inlineHtml('**PRO** and *Environments* per [Standard Webhooks](https://www.standardwebhooks.com/).')).toBe(
      '<strong>PRO</strong> and <em>Environments</em> per <a href="https://www.standardwebhooks.com/">Standard Webhooks</a>.',
    );
    expect(inlineHtml('see https://example.com/a.')).toBe(
      'see <a href="https://example.com/a">https://example.com/a</a>.',
    );
    expect(inlineHtml('[x](javascript:alert(1))')).not.toContain('href');
    expect(inlineHtml('`surveys:*` grants `*`, snake_case_name stays')).toBe(
      '<code>surveys:*</code> grants <code>*</code>, snake_case_name stays',
    );
  });

  it('renders numbered lists with wrapped lines and code blocks inside items', () => {
    const html = markdownHtml(
      [
        '1. **Get a key.** Keys are created',
        '   by the CLI.',
        '2. **Make a request.**',
        '',
        '   ```sh',
        '   curl -s "$URL/api/v1/me"',
        '   ```',
        '',
        '   or with the SDK.',
        '3. Done.',
        '',
        'After.',
      ].join('\n'),
    );
    expect(html).toBe(
      [
        '<ol>',
        '<li><p><strong>Get a key.</strong> Keys are created\nby the CLI.</p></li>',
        '<li><p><strong>Make a request.</strong></p>',
        '<pre><code class="language-sh">curl -s &quot;$URL/api/v1/me&quot;</code></pre>',
        '<p>or with the SDK.</p></li>',
        '<li><p>Done.</p></li>',
        '</ol>',
        '<p>After.</p>',
      ].join('\n'),
    );
  });

  it('renders tight bullet lists, headings and tables (a `|` inside code stays in its cell)', () => {
    expect(markdownHtml('## Scopes\n\n- one\n- two `a | b`\n\ntext', 1)).toBe(
      '<h3>Scopes</h3>\n<ul>\n<li>one</li>\n<li>two <code>a | b</code></li>\n</ul>\n<p>text</p>',
    );
    expect(markdownHtml('| `type` | value |\n|---|--:|\n| `matrix` | `{rowId: int | id}` |')).toBe(
      [
        '<table>',
        '<thead><tr><th><code>type</code></th><th style="text-align:right">value</th></tr></thead>',
        '<tbody>',
        '<tr><td><code>matrix</code></td><td style="text-align:right"><code>{rowId: int | id}</code></td></tr>',
        '</tbody>',
        '</table>',
      ].join('\n'),
    );
  });

  it('leaves no Markdown syntax in the HTML of any description of the contract', () => {
    const descriptions: string[] = [];
    JSON.stringify(JSON.parse(readFileSync(defaultBundle, 'utf8')), (key, value: unknown) => {
      if (key === 'description' && typeof value === 'string') descriptions.push(value);
      return value;
    });
    expect(descriptions.length).toBeGreaterThan(500);
    const leftovers = descriptions
      .map((text) => ({ text, html: markdownHtml(text).replace(/<(pre|code)>[\s\S]*?<\/\1>/g, '') }))
      .filter(
        ({ html }) =>
          /```|\*\*|^\s*#{1,6}\s|^\s*\|.*\|\s*$|\]\(/m.test(html) ||
          /<(?!\/?(?:p|a|em|strong|code|pre|ul|ol|li|h\d|table|thead|tbody|tr|th|td|br|hr|blockquote)\b)/.test(html),
      )
      .map(({ text }) => text.slice(0, 80));
    expect(leftovers).toEqual([]);
  });
});
