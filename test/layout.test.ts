/**
 * The library's layout (docs/layout.md): no import circle in lib/, code
 * outside lib/tachyon imports only its entry, and tachyon's levels import
 * downwards only (index → downgrade → read | write → v2 → file → format).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './shared';

interface ImportGraph {
  importGraph(dir?: string): Map<string, string[]>;
  cycles(graph: Map<string, string[]>): string[][];
  layoutViolations(graph: Map<string, string[]>, lib?: string): string[];
}
const load = (): Promise<ImportGraph> => import(path.join(repoRoot, 'scripts', 'import-graph.mjs')) as Promise<ImportGraph>;
const rel = (files: string[][]): string[] => files.map((c) => c.map((f) => path.relative(repoRoot, f)).sort().join(' ↔ '));

describe('lib/ layout', () => {
  it('has no import circle', async () => {
    const g = await load();
    const graph = g.importGraph(path.join(repoRoot, 'lib'));
    expect(graph.size).toBeGreaterThan(50);
    expect(rel(g.cycles(graph))).toEqual([]);
  });

  it("keeps tachyon's levels and its single entry", async () => {
    const g = await load();
    expect(g.layoutViolations(g.importGraph(path.join(repoRoot, 'lib')), path.join(repoRoot, 'lib'))).toEqual([]);
  });

  it('finds a circle, a deep import and an upward import when there are some', async () => {
    const g = await load();
    const lib = fs.mkdtempSync(path.join(os.tmpdir(), 'profpack-layout-'));
    try {
      const put = (file: string, text: string): void => {
        fs.mkdirSync(path.dirname(path.join(lib, file)), { recursive: true });
        fs.writeFileSync(path.join(lib, file), text);
      };
      put('tachyon/index.ts', "export * from './read/reader';\n");
      put('tachyon/read/reader.ts', "import type { X } from './v2';\nexport const a = 1;\n");
      put('tachyon/read/v2.ts', "import { a } from './reader';\nexport type X = number;\n");
      put('tachyon/file/layout.ts', "import { a } from '../read/reader';\n");
      put('convert/tachyon.ts', "import { a } from '../tachyon/read/reader';\n");
      const graph = g.importGraph(lib);
      expect(rel(g.cycles(graph))).toEqual(['lib/tachyon/read/reader.ts ↔ lib/tachyon/read/v2.ts'.replace(/lib/g, path.relative(repoRoot, lib))]);
      const bad = g.layoutViolations(graph, lib);
      expect(bad).toHaveLength(2);
      expect(bad.some((b) => b.includes('convert/tachyon.ts imports') && b.includes('import lib/tachyon/index.ts'))).toBe(true);
      expect(bad.some((b) => b.includes('file/layout.ts imports') && b.includes('file may import only levels below it'))).toBe(true);
    } finally {
      fs.rmSync(lib, { recursive: true, force: true });
    }
  });
});
