// Every relative link of README.md, CONTRIBUTING.md and docs/*.md reaches a file, and every `#anchor`
// a heading of the Markdown file it names, by GitHub's rules for heading ids: so a section moved from
// one page to another cannot leave a link behind it.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../support/paths.js';

/** The documents checked, relative to the repository's root. */
function documents(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs];
}

/** The lines of a Markdown text with fenced code blocks blanked (line numbers kept). */
function outsideFences(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (fence === undefined) fence = m[1]![0]!.repeat(m[1]!.length);
      else if (m[1]!.startsWith(fence)) fence = undefined;
      return '';
    }
    return fence === undefined ? line : '';
  });
}

/** A heading's id as GitHub makes it: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function githubSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown text: its headings' ids (a repeated one gets `-1`, `-2`…) and `<a id>`s. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of outsideFences(text)) {
    const h = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (h) {
      const slug = githubSlug(h[1]!);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(a[1]!);
  }
  return anchors;
}

/** The link targets of a Markdown text outside code (fenced blocks and inline spans), with their lines. */
function linksOf(text: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  outsideFences(text).forEach((raw, i) => {
    const line = raw.replace(/(`+)[^`]*?\1/g, '');
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      links.push({ line: i + 1, target: m[1]! });
    const def = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (def) links.push({ line: i + 1, target: def[1]! });
  });
  return links;
}

/** What is wrong with one document's relative links: empty when nothing is. */
function brokenLinks(file: string): string[] {
  const problems: string[] = [];
  for (const { line, target } of linksOf(readFileSync(join(ROOT, file), 'utf8'))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not a file here
    const hash = target.indexOf('#');
    const path = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
    const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const to = path === '' ? file : normalize(join(dirname(file), path));
    const at = `${file}:${line}: ${target}`;
    if (to.startsWith('..') || !existsSync(join(ROOT, to))) {
      problems.push(`${at}: no file ${to}`);
      continue;
    }
    if (anchor === undefined) continue;
    if (statSync(join(ROOT, to)).isDirectory() || !to.endsWith('.md'))
      problems.push(`${at}: an anchor into ${to}, which is not a Markdown file`);
    else if (!anchorsOf(readFileSync(join(ROOT, to), 'utf8')).has(anchor))
      problems.push(`${at}: ${to} has no heading with the id '${anchor}'`);
  }
  return problems;
}

describe("the documentation's links", () => {
  it("heading ids follow GitHub's rules", () => {
    assert.equal(githubSlug('On the Messages API (`POST /v1/messages`)'), 'on-the-messages-api-post-v1messages');
    assert.equal(githubSlug('What runs, and where'), 'what-runs-and-where');
    assert.equal(githubSlug('Several instances: the roll-up'), 'several-instances-the-roll-up');
    assert.equal(githubSlug("olp's `max_tokens` — and [links](x.md)"), 'olps-max_tokens--and-links');
    const anchors = anchorsOf('# A\n\n```sh\n# not a heading\n```\n## A\n### B ##\n<a id="here"></a>\n');
    assert.deepEqual([...anchors].sort(), ['a', 'a-1', 'b', 'here']);
  });

  it('links are found in prose, not in code', () => {
    const text = 'See [x](a.md#b) and `[y](no.md)`.\n\n```md\n[z](no.md)\n```\n[ref]: c.md\n';
    assert.deepEqual(linksOf(text), [
      { line: 1, target: 'a.md#b' },
      { line: 6, target: 'c.md' },
    ]);
  });

  it('every relative link reaches a file, and every #anchor a heading of it', () => {
    const files = documents();
    for (const f of ['README.md', 'CONTRIBUTING.md', 'docs/clients.md', 'docs/family.md'])
      assert.ok(files.includes(f) && existsSync(join(ROOT, f)), `${f} is missing`);
    const count = files.reduce((n, f) => n + linksOf(readFileSync(join(ROOT, f), 'utf8')).length, 0);
    assert.ok(count > 50, `only ${count} links found`);
    assert.deepEqual(files.flatMap(brokenLinks), []);
  });
});
