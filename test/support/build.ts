/**
 * The CLI and the recording preload run as plain Node processes, so their
 * tests compile lib/ into a temporary package (tsc, ~18 CPU-s) that links this
 * checkout's node_modules and native build. The package is compiled once per
 * content of lib/ and shared by every test file and both backends' runs (32
 * files compiled it each, ~64 compiles a CI run): cached under the system's
 * temporary folder, keyed by a hash of lib/, tsconfig.json, TypeScript's
 * version and this checkout's path, so an edit to lib/ compiles afresh.
 */
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
} from 'node:fs';
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

// The links a package needs beside dist/: the addon as node-gyp-build finds it here (a local build, or the prebuilds
// `npm run prebuilds` leaves) and lib/ as the package ships it (the view's page template is read from lib/view/template).
const LINKED = ['node_modules', 'package.json', 'build', 'prebuilds', 'lib'];
const CACHE = path.join(tmpdir(), `profpack-build-cache-${process.getuid?.() ?? 0}`);
const STALE_MS = 24 * 3600 * 1000;

/** What the compiled package depends on: every file of lib/, the compiler's options and version, the links. */
export function buildKey(checkout: string = repoRoot): string {
  const hash = createHash('sha256');
  const typescript = JSON.parse(
    readFileSync(path.join(checkout, 'node_modules', 'typescript', 'package.json'), 'utf8'),
  );
  hash.update(
    `${checkout}\0${String(typescript.version)}\0${readFileSync(path.join(checkout, 'tsconfig.json'), 'utf8')}`,
  );
  for (const name of LINKED) hash.update(`\0${name}:${existsSync(path.join(checkout, name))}`);
  const files = readdirSync(path.join(checkout, 'lib'), { recursive: true, encoding: 'utf8' }).sort();
  for (const file of files) {
    const full = path.join(checkout, 'lib', file);
    if (statSync(full).isFile()) hash.update(`\0${file}\0`).update(readFileSync(full));
  }
  return hash.digest('hex').slice(0, 24);
}

function compileInto(root: string): void {
  execFileSync(
    process.execPath,
    [
      path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      path.join(repoRoot, 'tsconfig.json'),
      '--outDir',
      path.join(root, 'dist'),
      '--sourceMap',
      'false',
      '--declaration',
      'false',
    ],
    { stdio: 'pipe' },
  );
  for (const name of LINKED)
    if (existsSync(path.join(repoRoot, name))) symlinkSync(path.join(repoRoot, name), path.join(root, name));
}

/** The shared compiled package for lib/ as it is now: compiled when no run has yet (two workers may both). */
function cachedRoot(): string {
  const root = path.join(CACHE, buildKey());
  if (existsSync(path.join(root, 'dist', 'cli', 'main.js'))) {
    utimesSync(root, new Date(), new Date()); // in use: not pruned as stale by a run on another lib/
    return root;
  }
  mkdirSync(CACHE, { recursive: true, mode: 0o755 });
  const fresh = mkdtempSync(`${root}.tmp-`);
  compileInto(fresh);
  chmodSync(fresh, 0o755); // tests may run the CLI as another user (test/memory/heap-open)
  try {
    renameSync(fresh, root); // atomic: a reader sees no half-written package
  } catch {
    rmSync(fresh, { recursive: true, force: true }); // another worker's rename won: the same output
  }
  // Packages of older lib/ states, a day unused.
  for (const name of readdirSync(CACHE)) {
    const old = path.join(CACHE, name);
    // Another worker may have removed it since readdir: no entry, nothing to prune.
    const used = statSync(old, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
    if (old !== root && Date.now() - used > STALE_MS) rmSync(old, { recursive: true, force: true });
  }
  return root;
}

/**
 * lib/ compiled as a package. Shared with every other test (the cache above) unless `writable`: then a copy of
 * its own, for a test that edits the compiled files (test/formats/one-list adds a format to dist/).
 */
export function compileBuild(options: { writable?: boolean } = {}): Build {
  const shared = cachedRoot();
  let root = shared;
  if (options.writable) {
    root = mkdtempSync(path.join(tmpdir(), 'profpack-cli-'));
    cpSync(path.join(shared, 'dist'), path.join(root, 'dist'), { recursive: true });
    for (const name of LINKED)
      if (existsSync(path.join(shared, name))) symlinkSync(path.join(repoRoot, name), path.join(root, name));
  }
  const dist = path.join(root, 'dist');
  return {
    root,
    dist,
    cli: path.join(dist, 'cli', 'main.js'),
    cleanup: () => {
      if (root !== shared) rmSync(root, { recursive: true, force: true });
    },
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
export function buildForTests(dirPrefix: string, options: { writable?: boolean } = {}): TestBuild {
  const dir = scratchDir(dirPrefix);
  const build: Build = { root: '', cli: '', dist: '', cleanup: () => {} };
  beforeAll(() => {
    Object.assign(build, compileBuild(options));
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
