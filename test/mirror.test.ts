/**
 * test/ mirrors lib/ folder by folder (issue 30): a test lives at the relative path of the lib/ code it tests, so
 * the tests of a concern are found where its code is. Every folder under test/ (at any depth) is a folder of lib/ at
 * the same path or a test-only concern named below, and every lib/ folder has its test/ folder unless named below
 * with the reason it has none.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/environment';

/** Folders at test/'s top with no lib/ twin, each a concern of the tests themselves (with all below it). */
const TEST_ONLY: Record<string, string> = {
  support: 'helpers shared by tests and benches: CPython, addon loading, scratch folders, RNG, profile generators',
  fixtures: 'stored inputs and the scripts that made them',
  fuzz: 'the fuzz harnesses with their corpus and regressions; they cross every concern',
  outside: 'profiles written by other tools (Go, Datadog, Node), read through every concern',
  oracle:
    'every number profpack prints or writes against an independent tool (CPython, go tool pprof, V8), across concerns',
};
/** At any depth, inside a mirrored folder: the scripts its tests run in a child process. */
const CHILD = 'child';
/** lib/ folders with no test/ folder of their own. */
const UNTESTED: Record<string, string> = {
  types: 'type declarations only, no code',
  'view/template': "the page's HTML, CSS and script: run in a browser by test/view",
  v8: "V8's profile shapes and one inspector call: checked where they are used (test/formats, test/record)",
  'cli/commands': "one file per command: each run through the CLI's main by test/cli",
  'tachyon/read/v2': "the reader's version-2 path: run by every version-2 file test in test/tachyon/codec",
  'tachyon/write/engines': 'the sample engines: run by every writer test (test/tachyon/write), one engine per backend',
};

function folders(root: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const sub = rel ? `${rel}/${e.name}` : e.name;
    out.push(sub, ...folders(root, sub));
  }
  return out;
}

const hasTests = (dir: string): boolean =>
  fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .some((name) => name.endsWith('.test.ts') && fs.statSync(path.join(dir, name)).isFile());

/** What breaks the mirror, one line each: a test/ folder with no place, a lib/ folder with no tests. */
function mirrorViolations(lib: string, test: string, untested: Record<string, string> = UNTESTED): string[] {
  const libFolders = new Set(folders(lib));
  const bad: string[] = [];
  for (const rel of folders(test)) {
    if (libFolders.has(rel) || Object.hasOwn(TEST_ONLY, rel.split('/')[0]!)) continue;
    const parent = path.posix.dirname(rel);
    if (path.posix.basename(rel) === CHILD && (parent === '.' || libFolders.has(parent))) continue;
    bad.push(`test/${rel}: no lib/${rel} and not a test-only concern`);
  }
  for (const rel of libFolders) {
    const tested = fs.existsSync(path.join(test, rel)) && hasTests(path.join(test, rel));
    if (Object.hasOwn(untested, rel)) {
      if (tested) bad.push(`lib/${rel}: listed as untested but test/${rel} has tests`);
    } else if (!tested) bad.push(`lib/${rel}: no tests in test/${rel}`);
  }
  for (const rel of Object.keys(untested)) if (!libFolders.has(rel)) bad.push(`lib/${rel}: listed but gone`);
  return bad.sort();
}

describe('test/ mirrors lib/', () => {
  it('has every test/ folder at its lib/ path or named as test-only, and tests for every lib/ folder', () => {
    expect(mirrorViolations(path.join(repoRoot, 'lib'), path.join(repoRoot, 'test'))).toEqual([]);
  });

  it('reports a misplaced folder, a child folder with no lib/ twin, a folder without tests and a stale entry', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'profpack-mirror-'));
    try {
      const file = (rel: string, text = ''): void => {
        fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
        fs.writeFileSync(path.join(root, rel), text);
      };
      for (const rel of ['a/index.ts', 'a/b/index.ts', 'c/index.ts', 'd/index.ts', 'e/x.d.ts']) file(`lib/${rel}`);
      for (const rel of ['a/a.test.ts', 'a/b/b.test.ts', 'a/child/run.cjs', 'support/s.ts', 'fixtures/x/y.bin']) {
        file(`test/${rel}`);
      }
      file('test/b/b.test.ts'); // b's tests at the top, not under a/
      file('test/a/b/c/c.test.ts'); // a folder lib/ does not have
      file('test/x/child/run.cjs'); // a child folder beside no concern
      file('test/d/helper.ts'); // a folder with no test in it
      expect(
        mirrorViolations(path.join(root, 'lib'), path.join(root, 'test'), { e: 'declarations', f: 'gone' }),
      ).toEqual([
        'lib/c: no tests in test/c',
        'lib/d: no tests in test/d',
        'lib/f: listed but gone',
        'test/a/b/c: no lib/a/b/c and not a test-only concern',
        'test/b: no lib/b and not a test-only concern',
        'test/x/child: no lib/x/child and not a test-only concern',
        'test/x: no lib/x and not a test-only concern',
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
