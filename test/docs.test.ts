/**
 * The manual holds together: every docs/ page is reachable from README.md by its links, every
 * relative link (and #anchor) in README.md and docs/ points at something that exists, and
 * docs/architecture.md's folder table lists exactly the folders of lib/. Pages may be added freely:
 * they only need a link from a page that is reachable.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(__dirname, '..');
const docsDir = path.join(repoRoot, 'docs');

/**
 * Pages other branches of this session add (heap recording): linked already, allowed to be missing until they
 * land. Once a page exists it is checked like any other; delete its entry then.
 */
const PENDING_PAGES = new Set<string>();

function markdownFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? markdownFiles(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : [],
    );
}

/** The lines of a markdown file outside fenced code blocks, inline code removed. */
function proseLines(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) out.push(line.replace(/`[^`]*`/g, (code) => (code.includes('](') ? '' : code)));
  }
  return out;
}

/** GitHub's heading anchors: lower case, punctuation dropped (not - or _), each space a hyphen, repeats numbered. */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

interface Link {
  from: string;
  target: string;
}

function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  for (const line of proseLines(fs.readFileSync(file, 'utf8'))) {
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      links.push({ from: file, target });
    }
  }
  return links;
}

function resolve(link: Link): { file: string; anchor: string | null } {
  const [filePart, anchor] = link.target.split('#', 2) as [string, string | undefined];
  const file = filePart === '' ? link.from : path.resolve(path.dirname(link.from), decodeURIComponent(filePart));
  return { file, anchor: anchor ?? null };
}

const rel = (file: string): string => path.relative(repoRoot, file).split(path.sep).join('/');
const readme = path.join(repoRoot, 'README.md');
const pages = markdownFiles(docsDir);

describe('docs', () => {
  it('finds the pages', () => {
    expect(pages.map(rel)).toEqual(expect.arrayContaining(['docs/architecture.md', 'docs/cli.md', 'docs/api.md']));
  });

  it('every relative link in README.md and docs/ resolves, anchors included', () => {
    const broken: string[] = [];
    for (const file of [readme, ...pages]) {
      for (const link of relativeLinks(file)) {
        const { file: target, anchor } = resolve(link);
        if (!fs.existsSync(target)) {
          if (!PENDING_PAGES.has(rel(target))) broken.push(`${rel(file)}: ${link.target} (no such file)`);
          continue;
        }
        if (anchor !== null && target.endsWith('.md') && !headingAnchors(fs.readFileSync(target, 'utf8')).has(anchor)) {
          broken.push(`${rel(file)}: ${link.target} (no heading with that anchor)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('every docs/ page is reachable from README.md', () => {
    const reached = new Set<string>([readme]);
    const queue = [readme];
    while (queue.length > 0) {
      for (const link of relativeLinks(queue.shift()!)) {
        const { file } = resolve(link);
        if (file.endsWith('.md') && fs.existsSync(file) && !reached.has(file)) {
          reached.add(file);
          queue.push(file);
        }
      }
    }
    expect(pages.filter((p) => !reached.has(p)).map(rel)).toEqual([]);
  });

  it("docs/architecture.md's folder table lists exactly the folders of lib/", () => {
    const folders: string[] = [];
    (function walk(dir: string, prefix: string): void {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        if (!e.isDirectory()) continue;
        folders.push(`${prefix}${e.name}/`);
        walk(path.join(dir, e.name), `${prefix}${e.name}/`);
      }
    })(path.join(repoRoot, 'lib'), '');
    const text = fs.readFileSync(path.join(docsDir, 'architecture.md'), 'utf8');
    const section = text.slice(text.indexOf('\n## Folders'));
    const listed = [...section.matchAll(/^\| `([^`]+\/)` \|/gm)].map((m) => m[1]!);
    expect(folders.length).toBeGreaterThan(10);
    expect({
      missing: folders.filter((f) => !listed.includes(f)),
      gone: listed.filter((f) => !folders.includes(f)),
    }).toEqual({
      missing: [],
      gone: [],
    });
  });

  it('the anchor rule matches GitHub on the headings this manual uses', () => {
    const anchors = headingAnchors(
      '# A: `b` (c), d\n## `profpack dump --json`\n## Twice\n## Twice\n```\n# not a heading\n```\n',
    );
    expect([...anchors]).toEqual(['a-b-c-d', 'profpack-dump---json', 'twice', 'twice-1']);
  });
});
