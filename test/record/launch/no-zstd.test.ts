/**
 * Installed with no compiler on Node < 22.15 (issue 38): neither zstd-napi nor Node's zstd writes zstd
 * (simulated with PROFPACK_ZSTD=fzstd, the read-only provider; the backend is the one under test). Every writer
 * given no compression writes uncompressed with one line saying so; an explicit zstd fails, coded, and leaves no file.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProfileReader } from '../../../lib/tachyon/index';
import { repoRoot } from '../../support/environment';
import { cpythonBeforeTests, cpythonDumps } from '../../support/cpython-dump';
import { scratchDir } from '../../support/scratch-dir';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = scratchDir('profpack-nocomp-');
const env = { ...process.env, PROFPACK_ZSTD: 'fzstd' };
const FALLBACK_LINE = /writing zstd needs the zstd-napi addon or Node >= 22\.15.*: writing uncompressed profiles/;

function run(args: string[]): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, args, { encoding: 'utf8', cwd: dir, env, timeout: 120_000 });
}

function script(name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, body);
  return file;
}

/** Busy in a function of a known name for `ms`, so a profile of it has that frame. */
const busy = (ms: number): string =>
  `function spinNoZstd() { let x = 0; const end = Date.now() + ${ms}; while (Date.now() < end) for (let i = 0; i < 1e4; i++) x += Math.sqrt(i); return x; }\n`;

/** profpack's sample count and CPython's own reading of `file`: same count, uncompressed, the known frame in it. */
function expectReadable(file: string): void {
  const dump = cpythonDumps([file]).get(path.basename(file))!;
  expect(dump.error).toBeNull();
  expect(dump.accepted).toBe(true);
  expect(dump.info!.compression_type).toBe(0);
  const reader = ProfileReader.open(file);
  try {
    expect(reader.info.compressionType).toBe(0);
    expect(Number(reader.info.sampleCount)).toBe(Number(dump.info!.sample_count));
  } finally {
    reader.close();
  }
  expect(dump.info!.sample_count).toBeGreaterThan(0);
  expect(JSON.stringify(dump.samples.map((s) => s.frames))).toContain('spinNoZstd');
}

describe('no zstd writer in this process', () => {
  cpythonBeforeTests();

  it('record -- node app.js writes an uncompressed profile and says so in one line', () => {
    const app = script('app.js', `${busy(400)}spinNoZstd();\n`);
    const out = path.join(dir, 'app.tach');
    const r = run([cli, 'record', '-o', out, '--', process.execPath, app]);
    expect(r.stderr).not.toMatch(/ERR_/);
    expect(r.status).toBe(0);
    expect(r.stderr.split('\n').filter((line) => FALLBACK_LINE.test(line))).toHaveLength(1);
    expect(r.stderr.split('\n').filter((line) => /zstd/.test(line))).toHaveLength(1);
    expectReadable(out);
  });

  it('record --compression zstd fails, coded, and leaves no file', () => {
    const app = script('explicit.js', `${busy(50)}spinNoZstd();\n`);
    const out = path.join(dir, 'explicit.tach');
    const r = run([cli, 'record', '--compression', 'zstd', '-o', out, '--', process.execPath, app]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/ERR_NATIVE_UNAVAILABLE: writing zstd needs/);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('convert with no --compression writes uncompressed Tachyon, with the one line', () => {
    const source = path.join(dir, 'source.tach');
    const app = script('convert-src.js', `${busy(300)}spinNoZstd();\n`);
    expect(run([cli, 'record', '--compression', 'none', '-o', source, '--', process.execPath, app]).status).toBe(0);
    const out = path.join(dir, 'converted.tach');
    const r = run([cli, 'convert', source, '--to', 'tachyon', '-o', out]);
    expect(r.stderr).not.toMatch(/ERR_/);
    expect(r.status).toBe(0);
    expect(r.stderr.split('\n').filter((line) => FALLBACK_LINE.test(line))).toHaveLength(1);
    expectReadable(out);
  });

  for (const writer of ['process', 'inline'] as const) {
    it(`startRecording() with its defaults (${writer} writer) writes uncompressed, one PROFPACK_NO_ZSTD warning`, () => {
      const out = path.join(dir, `library-${writer}.tach`);
      const app = script(
        `library-${writer}.js`,
        `const { startRecording } = require(${JSON.stringify(path.join(repoRoot, 'dist', 'index.js'))});\n` +
          `const warnings = [];\nprocess.on('warning', (w) => warnings.push(w.code));\n` +
          busy(400) +
          `const rec = startRecording({ out: ${JSON.stringify(out)}, writer: '${writer}' });\n` +
          `spinNoZstd();\nrec.stop();\n` +
          `setImmediate(() => console.log(JSON.stringify(warnings.filter((c) => c !== 'PROFPACK_NO_NATIVE'))));\n`,
      );
      const r = run([app]);
      expect(r.stderr).not.toMatch(/ERR_/);
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout.trim())).toEqual(['PROFPACK_NO_ZSTD']);
      expectReadable(out);
    });
  }

  it("ProfileWriter given compression: 'zstd' fails at open, coded, without creating or truncating the file", () => {
    const fresh = path.join(dir, 'fresh.tach');
    const kept = path.join(dir, 'kept.tach');
    fs.writeFileSync(kept, 'keep me');
    const app = script(
      'writer.js',
      `const { ProfileWriter } = require(${JSON.stringify(path.join(repoRoot, 'dist', 'index.js'))});\n` +
        `for (const file of process.argv.slice(2)) {\n` +
        `  try { new ProfileWriter(file, { sampleIntervalUs: 1000, compression: 'zstd' }); console.log('opened'); }\n` +
        `  catch (e) { console.log(e.code); }\n}\n`,
    );
    const r = run([app, fresh, kept]);
    expect(r.stdout.trim().split('\n')).toEqual(['ERR_NATIVE_UNAVAILABLE', 'ERR_NATIVE_UNAVAILABLE']);
    expect(fs.existsSync(fresh)).toBe(false);
    expect(fs.readFileSync(kept, 'utf8')).toBe('keep me');
  });
});
