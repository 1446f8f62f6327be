/**
 * The CLI's common surface: `--version`, the one output spelling
 * (`-o, --output`) on every command that writes, the earlier spellings
 * still accepted but hidden, and the docs --help points to shipped in the
 * package.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProfileWriter } from '../../lib/tachyon/index';
import { repoRoot } from '../support/environment';
import { scratchDir } from '../support/scratch-dir';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = scratchDir('profpack-options-');
const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  version: string;
  files: string[];
};

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A small version-1 profile to feed the commands. */
function profile(name: string): string {
  const file = path.join(dir, name);
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000, startTimeUs: 1_000_000 });
  for (let i = 0; i < 5; i++) {
    w.writeSample(
      [
        {
          interpreterId: 0,
          threads: [
            {
              threadId: 7,
              status: 0,
              frameInfo: [{ filename: 'app.js', funcname: i % 2 ? 'even' : 'odd', location: { lineno: 3 } }],
            },
          ],
        },
      ],
      1_000_000 + 1000 * (i + 1),
    );
  }
  w.finalize();
  return file;
}

const WRITING_COMMANDS = ['convert', 'record', 'flame', 'diff', 'merge', 'export', 'downgrade', 'recover'];

describe('profpack --version', () => {
  it("prints package.json's version, as -V too", () => {
    for (const flag of ['--version', '-V']) {
      const r = run(flag);
      expect([r.status, r.stdout, r.stderr]).toEqual([0, `${pkg.version}\n`, '']);
    }
  });
});

describe('-o, --output on every command that writes', () => {
  it('each writing command lists -o, --output in its help, and no --out', () => {
    for (const command of WRITING_COMMANDS) {
      const help = run(command, '--help');
      expect(help.status, command).toBe(0);
      expect(help.stdout, command).toMatch(/-o, --output <\w+>/);
      expect(help.stdout, command).not.toMatch(/--out\b(?!put)/);
    }
  });

  it('merge writes to -o, to --output and to the hidden --out alike; two outputs or none are usage errors', () => {
    const input = profile('merge-in.tach');
    const sizes = ['-o', '--output', '--out'].map((flag) => {
      const out = path.join(dir, `merged${flag}.tach`);
      const r = run('merge', input, flag, out);
      expect(r.status, r.stderr).toBe(0);
      return readFileSync(out).length;
    });
    expect(new Set(sizes).size).toBe(1);
    const twice = run('merge', input, '-o', path.join(dir, 'a.tach'), '--out', path.join(dir, 'b.tach'));
    expect([twice.status, twice.stderr]).toEqual([
      2,
      `profpack: ERR_INVALID_ARGUMENT: the output is given twice (${path.join(dir, 'a.tach')}, ${path.join(dir, 'b.tach')})\n`,
    ]);
    const none = run('merge', input);
    expect([none.status, none.stderr]).toEqual([2, 'profpack: ERR_INVALID_ARGUMENT: no output given\n']);
  });

  it('convert, flame and recover take -o; recover still takes its positional OUT', () => {
    const input = profile('conv-in.tach');
    expect(run('convert', input, '-o', path.join(dir, 'c.cpuprofile'), '-q').status).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir, 'c.cpuprofile'), 'utf8')).samples).toHaveLength(5);
    expect(run('flame', input, '--output', path.join(dir, 'f.html')).status).toBe(0);
    expect(readFileSync(path.join(dir, 'f.html'), 'utf8')).toMatch(/^<!doctype html>/i);
    for (const args of [['-o', path.join(dir, 'r1.tach')], [path.join(dir, 'r2.tach')]]) {
      const r = run('recover', input, ...args);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/5 samples/);
    }
  });

  it('record takes -o and the hidden --out', () => {
    for (const flag of ['-o', '--out']) {
      const out = path.join(dir, `rec${flag}.tach`);
      const r = run(
        'record',
        flag,
        out,
        '--',
        process.execPath,
        '-e',
        'let x = 0; for (let i = 0; i < 1e6; i++) x += i;',
      );
      expect(r.status, r.stderr).toBe(0);
      expect(existsSync(out)).toBe(true);
    }
  });
});

describe('the docs --help points to ship in the package', () => {
  it('package.json "files" holds README.md and docs/, and every docs/ file the README links exists', () => {
    expect(pkg.files).toEqual(expect.arrayContaining(['README.md', 'docs/']));
    expect(run('--help').stdout).toMatch(/Docs: .*README\.md and .*docs\//);
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    const linked = [...new Set([...readme.matchAll(/\bdocs\/[\w.-]+\.(?:md|png)\b/g)].map((m) => m[0]))];
    expect(linked.length).toBeGreaterThan(0);
    for (const doc of linked) expect(existsSync(path.join(repoRoot, doc)), doc).toBe(true);
  });
});
