/**
 * The test tiers (scripts/test-tiers.mjs, docs/development.md): every test file is in exactly one tier, as vitest
 * itself lists them under PROFPACK_TEST_TIER; a new file is quick until its first line tags it slow; a misspelt tag
 * is an error; and the quick tier keeps a file in every test/ folder that has tests, so `npm test` still reaches
 * every lib/ folder (test/mirror.test.ts ties each test/ folder to its lib/ twin).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/environment';

interface Tiers {
  tiers(root?: string): { quick: string[]; slow: string[]; bad: string[] };
  tierOfText(text: string, name?: string): 'quick' | 'slow';
}
const load = (): Promise<Tiers> => import(path.join(repoRoot, 'scripts', 'test-tiers.mjs')) as Promise<Tiers>;

/** The files vitest would run with PROFPACK_TEST_TIER set to `tier` (unset: all), relative to the checkout. */
function vitestFiles(tier: string | undefined): string[] {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (tier === undefined) delete env.PROFPACK_TEST_TIER;
  else env.PROFPACK_TEST_TIER = tier;
  const out = execFileSync(
    process.execPath,
    [path.join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs'), 'list', '--filesOnly', '--json'],
    { cwd: repoRoot, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const listed = JSON.parse(out) as { file: string }[];
  return listed.map((e) => path.relative(repoRoot, e.file).split(path.sep).join('/')).sort();
}

describe('test tiers', () => {
  it('puts every test file in exactly one tier, as vitest lists them', async () => {
    const { tiers } = await load();
    const found = tiers();
    expect(found.bad).toEqual([]);
    const all = vitestFiles(undefined);
    const quick = vitestFiles('quick');
    const slow = vitestFiles('slow');
    expect(all.length).toBeGreaterThan(100);
    expect(slow.length).toBeGreaterThan(0);
    expect(quick).toEqual(found.quick);
    expect(slow).toEqual(found.slow);
    expect(quick.filter((f) => slow.includes(f))).toEqual([]);
    expect([...quick, ...slow].sort()).toEqual(all);
  }, 60_000);

  it('keeps a quick file in every test/ folder that holds test files', async () => {
    const { tiers } = await load();
    const found = tiers();
    const folderOf = (f: string): string => path.posix.dirname(f);
    const withQuick = new Set(found.quick.map(folderOf));
    const bare = [...new Set(found.slow.map(folderOf))].filter((d) => !withQuick.has(d)).sort();
    expect(bare).toEqual([]);
  });

  it('reads a new file as quick, the tag as slow, and a misspelt or reasonless tag as an error', async () => {
    const { tiers, tierOfText } = await load();
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'profpack-tiers-'));
    try {
      const file = (rel: string, text: string): void => {
        fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
        fs.writeFileSync(path.join(root, rel), text);
      };
      file('test/a/new.test.ts', "import { it } from 'vitest';\n");
      file('test/a/big.test.ts', '// test tier: slow (records a program for ~20 s per backend)\n/** doc */\n');
      file('test/b/typo.test.ts', '// test tier: slwo (records for ~20 s)\n');
      file('test/b/bare.test.ts', '// test tier: slow\n');
      file('test/b/later.test.ts', '/** doc */\n// test tier: slow (the tag counts on the first line only, ~9 s)\n');
      file('test/b/helper.ts', '// test tier: slow (not a test file)\n');
      const found = tiers(root);
      expect(found.quick).toEqual(['test/a/new.test.ts', 'test/b/later.test.ts']);
      expect(found.slow).toEqual(['test/a/big.test.ts']);
      expect(found.bad).toHaveLength(2);
      expect(found.bad[0]).toMatch(/^test\/b\/bare\.test\.ts: first line names a tier but is not/);
      expect(found.bad[1]).toMatch(/^test\/b\/typo\.test\.ts: first line names a tier but is not/);
      expect(() => tierOfText('// test tier: slow (no measured cost)\n', 'x.test.ts')).toThrow(/^x\.test\.ts: /);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
