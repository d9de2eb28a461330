import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { usageText, withGeneratedBlocks } from '../cli/usage.js';
import { ARROW_FILES, SCHEMAS } from '../core/snapshot/schema.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOCS = join(ROOT, 'docs');
const CONTRACT = join(DOCS, 'contract.md');

/** README.md and every page under docs/. */
function guidePages(): string[] {
  const pages = readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(DOCS, f));
  return [join(ROOT, 'README.md'), ...pages];
}

/** The text a reader sees as prose: fenced blocks and inline code spans blanked out. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** `[text](target)` links of a page's prose. */
function linksOf(markdown: string): string[] {
  const links: string[] = [];
  for (const m of prose(markdown).matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
    links.push(m[1]);
  return links;
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
function slugOf(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/`/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor a page offers: its headings' slugs (numbered when repeated) and explicit `<a id>`s. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = slugOf(m[1]);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  return anchors;
}

/** Where a relative link leads, or why it leads nowhere. */
function brokenLink(page: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto:: not ours to check
  const hash = target.indexOf('#');
  const path = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
  const file = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
  if (!existsSync(file)) return `${target}: no file ${relative(ROOT, file)}`;
  if (anchor === null) return null;
  if (statSync(file).isDirectory() || !file.endsWith('.md'))
    return `${target}: an anchor into a non-Markdown file`;
  if (!anchorsOf(readFileSync(file, 'utf8')).has(anchor))
    return `${target}: ${relative(ROOT, file)} has no heading or anchor "${anchor}"`;
  return null;
}

/** The contract ids docs/contract.md defines: a `## C<n> …` heading, each with its `<a id="c<n>">`. */
function contractIds(): { headings: string[]; anchors: Set<string> } {
  const text = readFileSync(CONTRACT, 'utf8');
  const headings = [...text.matchAll(/^## (C\d+[a-z]?) /gm)].map((m) => m[1]);
  return { headings, anchors: anchorsOf(text) };
}

const CODE_DIRS = ['accounts', 'bench', 'bin', 'builder', 'cli', 'core', 'schemas', 'server', 'test'];
const CODE_FILE = /\.(ts|js|py|json)$/;
const CITATION = /\bC(\d+[a-z]?)\b/g;

function codeFiles(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out; // cli/ exists once the command line has moved there
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'reports') codeFiles(p, out);
    } else if (CODE_FILE.test(e.name)) out.push(p);
  }
  return out;
}

describe('the guides', () => {
  it('every relative link in README.md and docs/*.md leads to a file, and to a heading or anchor there', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of guidePages()) {
      for (const target of linksOf(readFileSync(page, 'utf8'))) {
        checked++;
        const why = brokenLink(page, target);
        if (why !== null) broken.push(`${relative(ROOT, page)}: ${why}`);
      }
    }
    expect(broken).toEqual([]);
    // The README links every guide, and the guides each other and the contract.
    expect(checked).toBeGreaterThan(50);
  });

  it('docs/contract.md defines C0 to C37 (and C4b), then later ids, once each, in order, each heading with its own anchor', () => {
    const { headings, anchors } = contractIds();
    const expected = Array.from({ length: 47 }, (_, i) => `C${i}`);
    expected.splice(5, 0, 'C4b');
    expect(headings.slice(0, expected.length)).toEqual(expected);
    // Later decisions come in blocks reserved by the work that adds them (C50 onwards
    // for screening): ascending and each once, a block's gap allowed.
    const later = headings.slice(expected.length).map((h) => Number(h.slice(1)));
    expect(later.every((n, k) => n > (k === 0 ? 37 : later[k - 1]))).toBe(true);
    for (const id of headings) expect(anchors.has(id.toLowerCase()), `#${id.toLowerCase()}`).toBe(true);
  });

  it('every C<n> the code and the guides cite is a decision in docs/contract.md', () => {
    const defined = new Set(contractIds().headings);
    const undefinedCitations: string[] = [];
    let citations = 0;
    const files = [...CODE_DIRS.flatMap((d) => codeFiles(join(ROOT, d))), ...guidePages()];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(CITATION)) {
        citations++;
        if (!defined.has(`C${m[1]}`)) {
          const line = text.slice(0, m.index).split('\n').length;
          undefinedCitations.push(`${relative(ROOT, file)}:${line} C${m[1]}`);
        }
      }
    }
    expect(undefinedCitations).toEqual([]);
    expect(citations).toBeGreaterThan(600);
  });

  it('the README stays a front door: at most 150 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    expect(lines.length).toBeLessThanOrEqual(150);
  });

  it("docs/cli.md's generated parts are what the command declarations give (npm run docs:cli)", () => {
    const doc = readFileSync(join(DOCS, 'cli.md'), 'utf8');
    expect(doc, 'docs/cli.md is stale: run `npm run docs:cli`').toBe(withGeneratedBlocks(doc));
    expect(doc).toContain(`\`\`\`\n${usageText()}\n\`\`\``);
  });

  it('the check of docs/cli.md fails on a changed usage line, and on a missing block', () => {
    const doc = readFileSync(join(DOCS, 'cli.md'), 'utf8');
    const edited = doc.replace('[--funds 32000]', '[--funds 1000]');
    expect(edited).not.toBe(doc);
    expect(withGeneratedBlocks(edited)).toBe(doc);
    expect(() => withGeneratedBlocks(doc.replace('<!-- end generated: flags -->', ''))).toThrow(/flags/);
  });
});

describe('docs/snapshot-format.md', () => {
  it("lists every Arrow file's columns with the writer's names, types and nullability, in order", () => {
    const doc = readFileSync(join(DOCS, 'snapshot-format.md'), 'utf8');
    for (const file of ARROW_FILES) {
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${file}\` |`));
      expect(row, `a table row for ${file}`).toBeDefined();
      const cells = (row ?? '').split(' | ');
      const documented = [...(cells.at(-1) ?? '').matchAll(/`([a-z0-9_]+)` ([a-z0-9]+)(\?)?/g)].map(
        (m) => `${m[1]} ${m[2]}${m[3] ?? ''}`,
      );
      const written = SCHEMAS[file].fields.map(
        (f) => `${f.name} ${String(f.type).replace(/<.*$/, '').toLowerCase()}${f.nullable ? '?' : ''}`,
      );
      expect(documented).toEqual(written);
    }
  });
});

describe('the link checker itself', () => {
  it('makes the anchors GitHub makes', () => {
    expect(slugOf('Keys, limits and the order of checks')).toBe('keys-limits-and-the-order-of-checks');
    expect(slugOf('prices/&lt;Code&gt;.csv')).toBe('pricescodecsv');
    expect(slugOf('The `build` command')).toBe('the-build-command');
    expect([...anchorsOf('# A\n## A\n<a id="c4"></a>\n```\n# not a heading\n```\n')]).toEqual([
      'a',
      'a-1',
      'c4',
    ]);
  });

  it('finds links in prose, not in code', () => {
    expect(linksOf('[a](x.md) `[b](y.md)`\n```\n[c](z.md)\n```\n[d](w.md#e "t")')).toEqual([
      'x.md',
      'w.md#e',
    ]);
  });

  it('finds a link to a missing file or heading broken', () => {
    const page = join(ROOT, 'README.md');
    expect(brokenLink(page, 'docs/contract.md#c4')).toBeNull();
    expect(brokenLink(page, 'docs/contract.md#c99')).toMatch(/no heading or anchor "c99"/);
    expect(brokenLink(page, 'docs/nowhere.md')).toMatch(/no file docs\/nowhere\.md/);
    expect(brokenLink(page, 'https://example.com/x.md')).toBeNull();
  });
});
