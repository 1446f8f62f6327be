/**
 * The CLI turns on Node's compile cache for its own modules where Node has one (module.enableCompileCache, Node >=
 * 22.1): the cache goes under the OS temp dir (NODE_COMPILE_CACHE unset), nowhere else; NODE_DISABLE_COMPILE_CACHE=1
 * turns it off; the recorded program inherits nothing of it. On a Node without the API nothing is written at all.
 * Runs the compiled CLI (dist/, `npm run compile`) with this test's Node.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SLOWDOWN, repoRoot } from '../support/environment';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const root = fs.mkdtempSync(path.join(tmpdir(), 'profpack-compile-cache-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const hasCompileCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';

/** Every file under dir, relative to it. */
function filesUnder(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile());
}

/** `profpack record` of a program that reports what it sees of the cache, with its own temp and working dirs. */
function recordOnce(name: string, extraEnv: Record<string, string>) {
  const temp = path.join(root, name, 'temp');
  const work = path.join(root, name, 'work');
  fs.mkdirSync(temp, { recursive: true });
  fs.mkdirSync(work, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: temp, ...extraEnv };
  delete env.NODE_COMPILE_CACHE;
  if (extraEnv.NODE_DISABLE_COMPILE_CACHE === undefined) delete env.NODE_DISABLE_COMPILE_CACHE;
  const program =
    "const m = require('node:module'); require('node:fs').writeFileSync('seen.json', JSON.stringify({ " +
    'env: process.env.NODE_COMPILE_CACHE ?? null, dir: m.getCompileCacheDir?.() ?? null }));';
  const run = spawnSync(process.execPath, [cli, 'record', '-o', 'p.tach', '--', process.execPath, '-e', program], {
    cwd: work,
    env,
    encoding: 'utf8',
    timeout: 120_000 * SLOWDOWN,
  });
  expect(run.status, run.stderr).toBe(0);
  const seen = JSON.parse(fs.readFileSync(path.join(work, 'seen.json'), 'utf8')) as Record<string, unknown>;
  return { temp, work, seen };
}

describe('the compile cache of the CLI', () => {
  it('is written under the OS temp dir only, and the recorded program gets none of it', () => {
    const { temp, work, seen } = recordOnce('on', {});
    expect(filesUnder(work).sort()).toEqual(['p.tach', 'seen.json']);
    const cached = filesUnder(temp);
    if (hasCompileCache) {
      expect(cached.length).toBeGreaterThan(10);
      expect(cached.every((f) => f.startsWith(`node-compile-cache${path.sep}`))).toBe(true);
    } else expect(cached).toEqual([]);
    expect(seen).toEqual({ env: null, dir: null });
  });

  it('NODE_DISABLE_COMPILE_CACHE=1 turns it off', () => {
    const { temp, work } = recordOnce('off', { NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(filesUnder(temp)).toEqual([]);
    expect(filesUnder(work).sort()).toEqual(['p.tach', 'seen.json']);
  });
});
