/**
 * The CLI and the recording preload run as plain Node processes, so their
 * tests compile lib/ into a temporary package (tsc, ~6 s) that links this
 * checkout's node_modules and native build.
 */
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { repoRoot, SLOWDOWN } from './environment';
import { scratchDir } from './scratch-dir';

export interface Build {
  root: string;
  cli: string;
  dist: string;
  cleanup(): void;
}

export function compileBuild(): Build {
  const root = mkdtempSync(path.join(tmpdir(), 'profpack-cli-'));
  const dist = path.join(root, 'dist');
  execFileSync(
    process.execPath,
    [
      path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      path.join(repoRoot, 'tsconfig.json'),
      '--outDir',
      dist,
      '--sourceMap',
      'false',
      '--declaration',
      'false',
    ],
    { stdio: 'pipe' },
  );
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'));
  symlinkSync(path.join(repoRoot, 'package.json'), path.join(root, 'package.json'));
  // The addon as node-gyp-build finds it here: a local build, or prebuilds (what `npm run prebuilds` leaves);
  // lib/ as the package ships it (the view's page template is read from lib/view/template).
  for (const dir of ['build', 'prebuilds', 'lib'])
    if (existsSync(path.join(repoRoot, dir))) symlinkSync(path.join(repoRoot, dir), path.join(root, dir));
  return {
    root,
    dist,
    cli: path.join(dist, 'cli', 'main.js'),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export interface TestBuild {
  build: Build;
  /** The scratch directory, the CLI's working directory. */
  dir: string;
  /** `profpack ARGS` run in `dir` with `env` added to this process's; waits, text output. */
  cli(args: string[], env?: NodeJS.ProcessEnv): SpawnSyncReturns<string>;
}

/**
 * A CLI test file's build and scratch directory: the build is compiled before the file's tests (not at import:
 * tsc takes seconds, within the hook's timeout), and both are removed after them.
 */
export function buildForTests(dirPrefix: string): TestBuild {
  const dir = scratchDir(dirPrefix);
  const build: Build = { root: '', cli: '', dist: '', cleanup: () => {} };
  beforeAll(() => {
    Object.assign(build, compileBuild());
  });
  afterAll(() => build.cleanup());
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> =>
    spawnSync(process.execPath, [build.cli, ...args], {
      encoding: 'utf8',
      cwd: dir,
      env: { ...process.env, ...env },
      timeout: 120_000 * SLOWDOWN,
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 << 20,
    });
  return { build, dir, cli };
}
