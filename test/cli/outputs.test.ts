// test tier: slow (every command's output under failures, through the compiled CLI, ~16 s)
/**
 * Outputs (issue 29): every command writes through a temporary file in the
 * output's directory and renames it at the end, so a failure leaves the old
 * output (or nothing) and no 0-byte file; an output that is one of the
 * inputs (same device and inode) is refused before anything is opened for
 * writing; a ProfileWriter holds `<path>.lock`, so a second writer on the
 * path is a coded error. Runs on the process backend (test-both runs both).
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import { isProfpackError } from '../../lib/errors';
import { mergeProfiles } from '../../lib/fleet/index';
import { ProfileReader, ProfileWriter, recover } from '../../lib/tachyon/index';
import { GARBLED_LOCK_STALE_MS } from '../../lib/tachyon/write/lifetime';
import { buildForTests } from '../support/build';

const { dir, cli } = buildForTests('profpack-outputs-');

/** A finalized profile of `samples` samples. */
function profile(name: string, samples = 50): string {
  const file = path.join(dir, name);
  const w = new ProfileWriter(file, { sampleIntervalUs: 1000, startTimeUs: 1_000_000 });
  const f = w.internFrame({ filename: 'a.py', funcname: `f_${name}`, lineno: 1 });
  for (let i = 0; i < samples; i++) w.writeStack(1, 0, 1_001_000 + i * 1000, 0, [f]);
  w.finalize();
  return file;
}

function expectOneErrorLine(r: SpawnSyncReturns<string>, code: string): void {
  expect(r.status).toBe(2);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(new RegExp(`^profpack: ${code}`));
}

/** Names in `dir` that a failed command must not leave (temporary files, 0-byte files). */
function leftovers(): string[] {
  return fs
    .readdirSync(dir)
    .filter(
      (n) =>
        n.startsWith('.profpack-tmp-') ||
        n.endsWith('.lock') ||
        (fs.statSync(path.join(dir, n)).isFile() && fs.statSync(path.join(dir, n)).size === 0),
    );
}

describe('an output that is an input is refused before anything is written', () => {
  it('convert a.tach -o a.tach, -o ./a.tach, -o a hard link of it: exit 2, ERR_OUTPUT_IS_INPUT, the input unchanged', () => {
    const a = profile('same.tach');
    const before = fs.readFileSync(a);
    fs.linkSync(a, path.join(dir, 'same-link.tach'));
    for (const out of ['same.tach', './same.tach', 'same-link.tach']) {
      expectOneErrorLine(cli(['convert', 'same.tach', '-o', out]), 'ERR_OUTPUT_IS_INPUT');
      expect(Buffer.compare(fs.readFileSync(a), before)).toBe(0);
    }
    expect(leftovers()).toEqual([]);
  });

  it('merge a b -o b; merge DIR -o DIR/day.tach run twice', () => {
    const a = profile('m-a.tach');
    const b = profile('m-b.tach');
    const before = fs.readFileSync(b);
    expectOneErrorLine(cli(['merge', a, b, '-o', b]), 'ERR_OUTPUT_IS_INPUT');
    expect(Buffer.compare(fs.readFileSync(b), before)).toBe(0);
    const day = fs.mkdtempSync(path.join(dir, 'day-'));
    fs.copyFileSync(a, path.join(day, '1.tach'));
    fs.copyFileSync(b, path.join(day, '2.tach'));
    const first = cli(['merge', day, '-o', path.join(day, 'day.tach')]);
    expect(first.status, first.stderr).toBe(0);
    const merged = fs.readFileSync(path.join(day, 'day.tach'));
    expectOneErrorLine(cli(['merge', day, '-o', path.join(day, 'day.tach')]), 'ERR_OUTPUT_IS_INPUT');
    expect(Buffer.compare(fs.readFileSync(path.join(day, 'day.tach')), merged)).toBe(0);
    expect(fs.readdirSync(day).sort()).toEqual(['1.tach', '2.tach', 'day.tach']);
  });

  it('recover IN IN, recover IN IN.journal, flame a.tach -o a.tach, diff --output a.tach', () => {
    const a = profile('r.tach');
    const before = fs.readFileSync(a);
    expectOneErrorLine(cli(['recover', a, a]), 'ERR_OUTPUT_IS_INPUT');
    expectOneErrorLine(cli(['flame', a, '-o', a]), 'ERR_OUTPUT_IS_INPUT');
    expectOneErrorLine(cli(['diff', a, profile('r2.tach'), '-o', a]), 'ERR_OUTPUT_IS_INPUT');
    expect(Buffer.compare(fs.readFileSync(a), before)).toBe(0);
    const journal = path.join(dir, 'r.tach.journal');
    fs.writeFileSync(journal, 'x');
    expect(() => recover(a, journal)).toThrow(expect.objectContaining({ code: 'ERR_OUTPUT_IS_INPUT' }));
    expect(fs.readFileSync(journal, 'utf8')).toBe('x');
    fs.rmSync(journal);
  });
});

describe('outputs are renamed into place whole', () => {
  it('a convert that fails half-way keeps the old output and leaves no temporary file', () => {
    const out = path.join(dir, 'keep.cpuprofile');
    fs.writeFileSync(out, 'old output');
    const bad = path.join(dir, 'bad.tach');
    const good = fs.readFileSync(profile('cut-source.tach', 2000));
    fs.writeFileSync(bad, good.subarray(0, good.length - 40)); // tables cut: refused at open
    const r = cli(['convert', bad, '-o', out]);
    expect(r.status).toBe(2);
    expect(fs.readFileSync(out, 'utf8')).toBe('old output');
    fs.rmSync(bad);
    expect(leftovers()).toEqual([]);
  });

  it('outputs into a missing directory: one coded line, nothing created (convert, flame, recover, merge)', () => {
    const a = profile('x.tach');
    const missing = path.join(dir, 'no-such-dir');
    for (const args of [
      ['convert', a, '-o', path.join(missing, 'x.pb.gz')],
      ['flame', a, '-o', path.join(missing, 'x.html')],
      ['recover', a, path.join(missing, 'x.tach')],
      ['merge', a, '-o', path.join(missing, 'x.tach')],
    ]) {
      const r = cli(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^profpack: ERR_[A-Z_]+: /);
    }
    expect(fs.existsSync(missing)).toBe(false);
    expect(leftovers()).toEqual([]);
  });

  it('library: mergeProfiles writes the merged file whole, into place', () => {
    const out = path.join(dir, 'lib-merged.tach');
    const r = mergeProfiles([profile('l1.tach'), profile('l2.tach')], out);
    expect(r.samples).toBe(100);
    const reader = ProfileReader.open(out);
    expect(Number(reader.info.sampleCount)).toBe(100);
    reader.close();
    expect(leftovers()).toEqual([]);
  });
});

describe('temporaries of a killed writer', () => {
  it('a later convert to the same output removes the temporaries whose pid is dead, not a live one (issue 38)', () => {
    profile('temps-in.tach');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const stale = path.join(dir, `.profpack-tmp-${dead.stdout}-0badc0de-temps-out.cpuprofile`);
    const live = path.join(dir, `.profpack-tmp-${process.pid}-0badc0de-temps-out.cpuprofile`);
    const other = path.join(dir, `.profpack-tmp-${dead.stdout}-0badc0de-another.cpuprofile`);
    for (const f of [stale, live, other]) fs.writeFileSync(f, 'partial');
    const run = cli(['convert', 'temps-in.tach', '-o', 'temps-out.cpuprofile']);
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.existsSync(live)).toBe(true); // its writer (this process) is alive
    expect(fs.existsSync(other)).toBe(true); // another target's: left to its own next write
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'temps-out.cpuprofile'), 'utf8')).nodes.length).toBeGreaterThan(0);
    for (const f of [live, other]) fs.rmSync(f);
  });
});

describe('one ProfileWriter per path', () => {
  const which = backend.name;
  it(`${which}: a second writer on the path is ERR_TACHYON_LOCKED and the first finalizes a readable file with its journal kept to itself`, () => {
    const file = path.join(dir, 'locked.tach');
    const first = new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which });
    const f = first.internFrame({ filename: 'a.py', funcname: 'main', lineno: 1 });
    first.writeStack(1, 0, 1000, 0, [f]);
    first.flush();
    expect(fs.existsSync(`${file}.lock`)).toBe(true);
    let code = '';
    try {
      new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which, formatVersion: 2 });
    } catch (err) {
      code = isProfpackError(err) ? err.code : String(err);
    }
    expect(code).toBe('ERR_TACHYON_LOCKED');
    expect(fs.existsSync(`${file}.journal`)).toBe(true);
    first.writeStack(1, 0, 2000, 0, [f]);
    first.finalize();
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
    const reader = ProfileReader.open(file);
    expect(Number(reader.info.sampleCount)).toBe(2);
    reader.close();
    // Free again once finalized; close() gives it back too.
    const again = new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which });
    again.close();
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });

  it(`${which}: a stale lock (its process gone) is taken over; a live one on this host is not`, () => {
    const file = path.join(dir, 'stale.tach');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    fs.writeFileSync(`${file}.lock`, `${dead.stdout} ${hostname()}\n`);
    const w = new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which });
    w.finalize();
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
    fs.writeFileSync(`${file}.lock`, `${process.ppid} ${hostname()}\n`);
    expect(() => new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which })).toThrow(
      expect.objectContaining({ code: 'ERR_TACHYON_LOCKED' }),
    );
    fs.rmSync(`${file}.lock`);
  });

  it(`${which}: an empty or garbled lock is taken over once ${GARBLED_LOCK_STALE_MS / 1000} s old, refused while young (issue 38)`, () => {
    const file = path.join(dir, 'garbled.tach');
    for (const content of ['', 'garbage', '\u0000\u0000\u0000', '12x host', `${process.pid}`, ' ']) {
      fs.writeFileSync(`${file}.lock`, content);
      // Young: its maker may be between creating and writing it.
      expect(() => new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which })).toThrow(
        expect.objectContaining({ code: 'ERR_TACHYON_LOCKED' }),
      );
      const old = (Date.now() - GARBLED_LOCK_STALE_MS - 1000) / 1000;
      fs.utimesSync(`${file}.lock`, old, old);
      const w = new ProfileWriter(file, { sampleIntervalUs: 1000, backend: which });
      expect(fs.readFileSync(`${file}.lock`, 'utf8')).toBe(`${process.pid} ${hostname()}\n`);
      w.finalize();
      expect(fs.existsSync(`${file}.lock`)).toBe(false);
    }
  });
});
