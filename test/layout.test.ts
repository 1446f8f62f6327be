/**
 * The library's layout (docs/layout.md): no import circle in lib/, code
 * outside any folder of lib/ (at any depth) imports only that folder's
 * index.ts, and tachyon's levels import downwards only
 * (index → v2-api → downgrade | recover → read | write → v2 → file → format);
 * lib/tachyon imports nothing of lib/v8, and lib/record's program and writer
 * sides nothing of each other (scripts/import-graph.mjs's APART); each exported type is defined in one file.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/environment';

interface ImportGraph {
  importGraph(dir?: string): Map<string, string[]>;
  cycles(graph: Map<string, string[]>): string[][];
  layoutViolations(graph: Map<string, string[]>, lib?: string): string[];
}
const load = (): Promise<ImportGraph> =>
  import(path.join(repoRoot, 'scripts', 'import-graph.mjs')) as Promise<ImportGraph>;
const rel = (files: string[][]): string[] =>
  files.map((c) =>
    c
      .map((f) => path.relative(repoRoot, f))
      .sort()
      .join(' ↔ '),
  );

/** Exported type-level names (type, interface, class, enum) defined in more than one .ts file under `dir`. */
function definedTwice(dir: string): string[] {
  const where = new Map<string, string[]>();
  for (const f of (fs.readdirSync(dir, { recursive: true }) as string[]).sort()) {
    if (!f.endsWith('.ts')) continue;
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    const defined = /^export (?:declare )?(?:abstract )?(?:const )?(?:interface|type|class|enum) ([A-Za-z0-9_$]+)/gm;
    for (const m of text.matchAll(defined))
      where.set(m[1]!, [...(where.get(m[1]!) ?? []), f.split(path.sep).join('/')]);
  }
  return [...where].filter(([, files]) => files.length > 1).map(([name, files]) => `${name}: ${files.join(', ')}`);
}

describe('lib/ layout', () => {
  it('has no import circle', async () => {
    const g = await load();
    const graph = g.importGraph(path.join(repoRoot, 'lib'));
    expect(graph.size).toBeGreaterThan(50);
    expect(rel(g.cycles(graph))).toEqual([]);
  });

  it("enters every folder through its index.ts and keeps tachyon's levels", async () => {
    const g = await load();
    const bad = g.layoutViolations(g.importGraph(path.join(repoRoot, 'lib')), path.join(repoRoot, 'lib'));
    expect(bad).toEqual([]);
  });

  it('docs/layout.md names every file of lib/tachyon by its path there, and no file that is gone', () => {
    const tachyon = path.join(repoRoot, 'lib', 'tachyon');
    const files = (fs.readdirSync(tachyon, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.split(path.sep).join('/'));
    const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'layout.md'), 'utf8');
    const block = doc.slice(doc.indexOf('```\n') + 4, doc.indexOf('```\n', doc.indexOf('```\n') + 4));
    const named = new Set([...block.matchAll(/^\s*([\w./-]+\.ts)\s/gm)].map((m) => m[1]!));
    expect(files.length).toBeGreaterThan(60);
    expect(files.filter((f) => !named.has(f))).toEqual([]);
    expect([...named].filter((f) => !files.includes(f))).toEqual([]);
  });

  it('holds at most 16 files directly in any folder of lib/ (rooms by job, not files split by size)', () => {
    const crowded: string[] = [];
    const walk = (dir: string): void => {
      const entries = fs.readdirSync(dir, { withFileTypes: true });
      const files = entries.filter((e) => e.isFile()).length;
      if (files > 16) crowded.push(`${path.relative(repoRoot, dir)}: ${files} files`);
      for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name));
    };
    walk(path.join(repoRoot, 'lib'));
    expect(crowded).toEqual([]);
  });

  it('names no issue numbers in lib/ or native/ (history belongs in git)', () => {
    const named: string[] = [];
    for (const top of ['lib', 'native']) {
      for (const f of fs.readdirSync(path.join(repoRoot, top), { recursive: true }) as string[]) {
        if (!/\.(ts|cc|h)$/.test(f)) continue;
        const text = fs.readFileSync(path.join(repoRoot, top, f), 'utf8');
        for (const m of text.matchAll(/\bissues? #?\d+/gi)) named.push(`${top}/${f}: ${m[0]}`);
      }
    }
    expect(named).toEqual([]);
  });

  it('defines each exported type, interface, class and enum in one file of lib/ (and sees a second definition)', () => {
    expect(definedTwice(path.join(repoRoot, 'lib'))).toEqual([]);
    const planted = fs.mkdtempSync(path.join(os.tmpdir(), 'profpack-layout-'));
    try {
      fs.mkdirSync(path.join(planted, 'a'));
      fs.writeFileSync(path.join(planted, 'a', 'one.ts'), 'export interface ThreadInfo {\n  id: number;\n}\n');
      fs.writeFileSync(path.join(planted, 'two.ts'), 'export type ThreadInfo = { id: bigint };\n');
      expect(definedTwice(planted)).toEqual(['ThreadInfo: a/one.ts, two.ts']);
    } finally {
      fs.rmSync(planted, { recursive: true, force: true });
    }
  });

  it('has no hand-written file over 500 lines in lib/ or native/ (fuzz harnesses aside)', () => {
    const long: string[] = [];
    const walk = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (e.name !== 'fuzz') walk(full);
        } else if (/\.(ts|cc|h)$/.test(e.name)) {
          const lines = fs.readFileSync(full, 'utf8').split('\n').length - 1;
          if (lines > 500) long.push(`${path.relative(repoRoot, full)}: ${lines} lines`);
        }
      }
    };
    walk(path.join(repoRoot, 'lib'));
    walk(path.join(repoRoot, 'native'));
    expect(long).toEqual([]);
  });

  it('finds a circle, a deep import and an upward import when there are some', async () => {
    const g = await load();
    const lib = fs.mkdtempSync(path.join(os.tmpdir(), 'profpack-layout-'));
    try {
      const put = (file: string, text: string): void => {
        fs.mkdirSync(path.dirname(path.join(lib, file)), { recursive: true });
        fs.writeFileSync(path.join(lib, file), text);
      };
      put('tachyon/index.ts', "export * from './read/index';\n");
      put('tachyon/read/index.ts', "export * from './reader';\n");
      put('tachyon/read/reader.ts', "import type { X } from './v2';\nexport const a = 1;\n");
      put('tachyon/read/v2.ts', "import { a } from './reader';\nexport type X = number;\n");
      put('tachyon/file/layout.ts', "import { a } from '../read/reader';\n");
      put('convert/tachyon.ts', "import { a } from '../tachyon/read/reader';\n");
      put('query/index.ts', "export { sum } from './sum';\n");
      put('query/sum.ts', 'export const sum = 1;\n');
      put('view/diff.ts', "import { sum } from '../query/sum';\nimport type { a } from '../query/index';\n");
      put('cli/main.ts', "import { run } from './commands/top';\n");
      put('cli/commands/top.ts', "import { sum } from '../../query/index';\nexport const run = sum;\n");
      put('v8/index.ts', 'export const frameFromV8 = 1;\n');
      put('tachyon/write/index.ts', "import type { frameFromV8 } from '../../v8/index';\n");
      const graph = g.importGraph(lib);
      expect(rel(g.cycles(graph))).toEqual([
        'lib/tachyon/read/reader.ts ↔ lib/tachyon/read/v2.ts'.replace(/lib/g, path.relative(repoRoot, lib)),
      ]);
      const bad = g.layoutViolations(graph, lib);
      const says = (from: string, what: string): boolean =>
        bad.some((b) => b.includes(`${from} imports`) && b.includes(what));
      expect(
        says('convert/tachyon.ts', 'import lib/tachyon/index.ts'.replace('lib', path.relative(repoRoot, lib))),
      ).toBe(true);
      // An upward import across two of tachyon's folders is both: past read/'s entry, and up a level.
      expect(says('file/layout.ts', 'import ' + path.relative(repoRoot, lib) + '/tachyon/read/index.ts')).toBe(true);
      expect(says('file/layout.ts', 'file may import only levels below it')).toBe(true);
      // Every folder, not only tachyon: a deep path into query/, and a folder (cli/commands) with no index.ts yet.
      expect(says('view/diff.ts', `import ${path.relative(repoRoot, lib)}/query/index.ts`)).toBe(true);
      expect(says('cli/main.ts', `import ${path.relative(repoRoot, lib)}/cli/commands/index.ts`)).toBe(true);
      // A folder kept apart from another: lib/tachyon imports no V8 frame mapping, not even a type.
      expect(says('tachyon/write/index.ts', 'lib/tachyon keeps apart from lib/v8')).toBe(true);
      expect(bad).toHaveLength(6);
    } finally {
      fs.rmSync(lib, { recursive: true, force: true });
    }
  });
});
