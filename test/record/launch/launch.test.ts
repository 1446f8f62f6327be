// test tier: slow (npm bins, shebangs, npx and forking programs recorded, ~11 s)
/**
 * `profpack record` on programs started the ways users start them: an npm
 * bin (a symlink), a shebang script, `npx`, node with its own --require and
 * --import, and a program that forks Node children (each recorded in its own
 * file). Runs the compiled CLI (dist/, `npm run compile`).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfileReader } from '../../../lib/tachyon/index';
import { SLOWDOWN, repoRoot } from '../../support/environment';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-launch-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const BUSY =
  'function busy(ms) { const end = Date.now() + ms; let x = 0; while (Date.now() < end) x += Math.sqrt(x + 1); return x; }\n';

function write(name: string, body: string, mode = 0o644): string {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, body, { mode });
  return file;
}

function record(args: string[], cwd = dir) {
  const run = spawnSync(process.execPath, [cli, 'record', ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 120_000 * SLOWDOWN,
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Sample count and the function names (with their files) a recording holds. */
function contents(file: string): { samples: number; functions: string[] } {
  const reader = ProfileReader.open(file);
  try {
    return {
      samples: Number(reader.info.sampleCount),
      functions: reader.frames.flatMap((f) => (f === null ? [] : [`${f.funcname} ${f.filename}`])),
    };
  } finally {
    reader.close();
  }
}

describe('profpack record: how users start a program', () => {
  it('records an npm bin through its symlink: the relative requires of the real script resolve', () => {
    write('pkg/lib/impl.js', `${BUSY}exports.run = () => busy(150);\n`);
    write(
      'pkg/bin/tool.js',
      "#!/usr/bin/env node\nrequire('../lib/impl.js').run();\nconsole.log('tool ran');\n",
      0o755,
    );
    fs.mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true });
    fs.symlinkSync('../../pkg/bin/tool.js', path.join(dir, 'node_modules', '.bin', 'tool'));
    const out = path.join(dir, 'bin.tach');
    const run = record(['--out', out, '--', 'node_modules/.bin/tool']);
    expect(run.stderr).not.toMatch(/Cannot find module/);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('tool ran\n');
    const { samples, functions } = contents(out);
    expect(samples).toBeGreaterThan(0);
    expect(functions.some((f) => f.startsWith('busy ') && f.endsWith('/pkg/lib/impl.js'))).toBe(true);
  });

  it("records TypeScript's own bin, node_modules/.bin/tsc (a symlink)", () => {
    const out = path.join(dir, 'tsc.tach');
    const run = record(['--out', out, '--', 'node_modules/.bin/tsc', '--version'], repoRoot);
    expect(run.stderr).not.toMatch(/Cannot find module/);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Version \d+\.\d+/);
    expect(contents(out).functions.some((f) => /\/typescript\/lib\/_?tsc\.js$/.test(f))).toBe(true);
  });

  it('records a shebang script run directly', () => {
    const script = write('shebang.js', `#!/usr/bin/env node\n${BUSY}busy(150);\n`, 0o755);
    const out = path.join(dir, 'shebang.tach');
    const run = record(['--out', out, '--', script]);
    expect(run.code).toBe(0);
    expect(contents(out).functions).toContain(`busy ${script}`);
  });

  it("keeps node's own --require and --import flags", () => {
    const required = write('required.cjs', 'globalThis.requiredRan = true;\n');
    const imported = write('imported.mjs', 'globalThis.importedRan = true;\n');
    const app = write(
      'flags-app.js',
      `${BUSY}busy(50); console.log(String(globalThis.requiredRan), String(globalThis.importedRan));\n`,
    );
    const out = path.join(dir, 'flags.tach');
    const run = record(['--out', out, '--', process.execPath, '--require', required, '--import', imported, app]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('true true\n');
    expect(contents(out).samples).toBeGreaterThan(0);
  });
});

describe('profpack record: child Node processes', () => {
  const app = write(
    'forker.js',
    [
      "const { fork, spawn } = require('node:child_process');",
      BUSY,
      'function childWork() { busy(150); }',
      "if (process.argv[2] === 'child') { childWork(); process.exit(0); }",
      'let ended = 0; const done = () => { if (++ended === 2) busy(50); };',
      "fork(__filename, ['child']).on('exit', done);",
      "spawn(process.execPath, [__filename, 'child'], { stdio: 'inherit' }).on('exit', done);",
    ].join('\n'),
  );

  it('writes one file per process: the root and both children, each with its own samples', () => {
    const out = path.join(dir, 'forks.tach');
    const run = record(['--out', out, '--', process.execPath, app]);
    expect(run.code).toBe(0);
    const childFiles = fs.readdirSync(dir).filter((f) => /^forks\.\d+\.tach$/.test(f));
    expect(childFiles).toHaveLength(2);
    for (const f of childFiles) {
      expect(run.stderr).toContain(`${f} (child process)`);
      const { samples, functions } = contents(path.join(dir, f));
      expect(samples).toBeGreaterThan(0);
      expect(functions).toContain(`childWork ${app}`);
    }
    const root = contents(out);
    expect(root.samples).toBeGreaterThan(0);
    expect(root.functions).not.toContain(`childWork ${app}`);
  });

  it('--no-children records the command alone', () => {
    const out = path.join(dir, 'alone.tach');
    const run = record(['--out', out, '--no-children', '--', process.execPath, app]);
    expect(run.code).toBe(0);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('alone.'))).toEqual(['alone.tach']);
  });

  it('npx: the process that runs the bin is recorded, and stderr says which file holds it', () => {
    const out = path.join(dir, 'npx.tach');
    const run = record(['--out', out, '--', 'npx', 'tsc', '--version'], repoRoot);
    expect(run.code).toBe(0);
    const child = /npx ran the program in a child process: its samples are in (\S+\.tach)/.exec(run.stderr);
    expect(child, run.stderr).not.toBeNull();
    expect(contents(child![1]!).functions.some((f) => /\/typescript\/lib\/_?tsc\.js$/.test(f))).toBe(true);
  });
});
