// test tier: slow (profpack record on full disks and signals, ~24 s)
/**
 * What `profpack record` does around its command (issue 38): a full disk stops the recording but keeps the file and
 * its journal, with the cause and the recover command; it refuses to write over a file of the command line, passes
 * SIGINT sent to it alone on to the program, fails when the command never started a recording, codes an unusable
 * --dir; and `info`/`top` of a killed recording say how to recover it.
 */
import { execFileSync, spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHeapTrace, ProfileReader } from '../../../lib/tachyon/index';
import { repoRoot } from '../../support/environment';
import { childOutput, sleep, strayChildren } from '../../support/child';
import { scratchDir } from '../../support/scratch-dir';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = scratchDir('profpack-record-command-');
const stray = strayChildren();

function profpack(args: string[]): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', cwd: dir, timeout: 200_000 });
}

function script(name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, body);
  return file;
}

describe('record on a file system that fills up', () => {
  const full = path.join(dir, 'full');
  beforeAll(() => {
    fs.mkdirSync(full);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', full]);
  });
  afterAll(() => execFileSync('umount', [full]));

  // Works (samples, retained arrays) for a while, fills the file system the profile is on, then works on. Both
  // phases last 1.5 s of the process's CPU, not of wall time: on a loaded machine as much is sampled, polled and
  // flushed before the disk fills, and as many new frames come after it.
  const program = script(
    'fill.js',
    "const fs = require('fs');\n" +
      'const kept = [];\n' +
      'function work() { let x = 0; for (let i = 0; i < 2e5; i++) x += Math.sqrt(i); kept.push(new Array(200).fill(x)); }\n' +
      'function cpuMs() { const { user, system } = process.cpuUsage(); return (user + system) / 1000; }\n' +
      'function busy(ms, then) { const end = cpuMs() + ms; (function go() { work(); if (cpuMs() < end) setImmediate(go); else then(); })(); }\n' +
      'busy(1500, () => {\n' +
      "  const fd = fs.openSync(process.argv[2], 'w');\n" +
      '  try { for (;;) fs.writeSync(fd, Buffer.alloc(4096, 1)); } catch (e) { console.log(`filled: ${e.code}`); }\n' +
      // Then 2,000 functions of long names: new frames and strings, more than the files' last pages can hold.
      "  const fns = Array.from({ length: 2000 }, (_, i) => new Function(`return function f${i}_${'x'.repeat(200)}() { let s = 0; for (let j = 0; j < 2e4; j++) s += j; return [s]; }`)());\n" +
      '  const end = cpuMs() + 1500;\n' +
      '  (function go(i) { for (let k = 0; k < 20; k++) kept.push(fns[(i + k) % 2000]()); if (cpuMs() < end) setImmediate(go, i + 20); })(0);\n' +
      '});\n',
  );

  for (const [name, flags] of [
    ['cpu', []],
    ['heap', ['--heap', '--heap-interval', '16k']],
    ['rotating cpu', ['--rotate', '500ms']],
    ['rotating heap', ['--heap', '--heap-interval', '16k', '--rotate', '500ms']],
  ] as [string, string[]][]) {
    it(`${name}: exit 2 with ENOSPC and the recover command; file and journal kept; recover gives them back`, () => {
      for (const f of fs.readdirSync(full)) fs.rmSync(path.join(full, f), { recursive: true, force: true });
      const run = profpack([
        'record',
        '-o',
        path.join(full, 'p.tach'),
        '--dir',
        path.join(full, 'rot'),
        '--harvest-ms',
        '100',
        '--flush-ms',
        '100',
        ...flags,
        '--',
        process.execPath,
        program,
        path.join(full, 'filler'),
      ]);
      expect(run.stdout).toContain('filled: ENOSPC');
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/cannot be written \(ENOSPC\): recording stopped, the command goes on/);
      const said = /^profpack: ERR_TACHYON_WRITE_IO: cannot write (\S+) \(ENOSPC\): (.*)$/m.exec(run.stderr);
      expect(said, run.stderr).not.toBeNull();
      const file = said![1]!;
      const readable: string[] = [];
      const recoverCommand = /`profpack recover (\S+)`/.exec(said![2]!);
      if (recoverCommand !== null) {
        expect(recoverCommand[1]).toBe(file);
        expect(fs.existsSync(`${file}.journal`)).toBe(true);
        const fixed = path.join(dir, `${name.replace(' ', '-')}.tach`);
        const recovered = profpack(['recover', file, '-o', fixed]);
        expect(recovered.status, recovered.stderr).toBe(0);
        readable.push(fixed);
      } else {
        // The failing file (a new rotated one) had had no flush: removed, the earlier ones are whole.
        expect(flags).toContain('--rotate');
        expect(said![2]).toContain(
          'nothing had been flushed to it, it is removed (the earlier rotated files are whole)',
        );
        expect(fs.existsSync(file)).toBe(false);
      }
      if (flags.includes('--rotate')) {
        const rotated = fs.readdirSync(path.join(full, 'rot')).filter((f) => f.endsWith('.tach'));
        for (const f of rotated) if (path.join(full, 'rot', f) !== file) readable.push(path.join(full, 'rot', f));
        // No empty file or lock of a next file that could not be started.
        expect(fs.readdirSync(path.join(full, 'rot')).filter((f) => f.endsWith('.lock'))).toEqual([]);
      }
      let samples = 0;
      let inWork = 0;
      let allocations = 0;
      for (const f of readable) {
        const reader = ProfileReader.open(f);
        for (const s of reader.samples()) {
          samples++;
          if (s.stack.some((id) => reader.frames[id]?.funcname === 'work')) inWork++;
        }
        reader.close();
        if (flags.includes('--heap'))
          for (const b of openHeapTrace(f)?.events() ?? []) if (b.kind !== 'free') allocations += b.ordinals.length;
      }
      expect(samples).toBeGreaterThan(0);
      expect(inWork).toBeGreaterThan(0);
      if (flags.includes('--heap')) expect(allocations).toBeGreaterThan(0);
      // 3 s of the program's CPU: 35-43 s a case at load 17 on 2 cores.
    }, 240_000);
  }
});

describe('record and its command', () => {
  it('refuses to write the profile over a file of the command line, which stays as it was', () => {
    const app = script('app.js', 'console.log("hello");\n');
    for (const out of ['app.js', './app.js', app]) {
      const run = profpack(['record', '-o', out, '--', process.execPath, 'app.js']);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/^profpack: ERR_OUTPUT_IS_INPUT: the output .* is the input .*\n$/);
      expect(fs.readFileSync(app, 'utf8')).toBe('console.log("hello");\n');
    }
  });

  it('passes SIGINT sent to record alone on to the program, which shuts down gracefully', async () => {
    const app = script(
      'graceful.js',
      "process.on('SIGINT', () => { console.log('graceful shutdown'); process.exit(0); });\n" +
        "console.log('ready ' + process.pid);\nsetInterval(() => {}, 1000);\n",
    );
    const out = path.join(dir, 'graceful.tach');
    // Its own session: no terminal whose Ctrl-C would reach the program too.
    const record = spawn(process.execPath, [cli, 'record', '-o', out, '--', process.execPath, app], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const io = childOutput(record);
    stray.add(Number((await io.when(/ready (\d+)/, 20_000))[1]));
    const exited = new Promise<number | null>((resolve) => record.once('exit', (code) => resolve(code)));
    record.kill('SIGINT');
    // Before --kill-after's 10 s: the program got the signal and exited by itself.
    const code = await Promise.race([exited, sleep(8000).then(() => 'late' as const)]);
    if (code === 'late') record.kill('SIGKILL');
    expect(code).toBe(0);
    expect(io.text()).toContain('graceful shutdown');
    const reader = ProfileReader.open(out);
    reader.close();
  });

  it('a script whose inline source map is over the cap: one warning naming it, recorded unmapped', () => {
    const head = '{"version":3,"sources":["src/app.ts"],"names":[],"mappings":"AAAA';
    const json = head + ';'.repeat(17 * 1024 * 1024) + '"}';
    const app = script(
      'bigmap.js',
      'function hot() { let x = 0; for (let i = 0; i < 1e7; i++) x += i; return x; }\nfor (let i = 0; i < 20; i++) hot();\n' +
        `//# sourceMappingURL=data:application/json;base64,${Buffer.from(json).toString('base64')}\n`,
    );
    const out = path.join(dir, 'bigmap.tach');
    const run = profpack(['record', '-o', out, '--', process.execPath, app]);
    expect(run.status, run.stderr).toBe(0);
    const warnings = run.stderr.split('\n').filter((l) => l.includes('warning'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      new RegExp(`^profpack: warning: source map of ${app} \\(inline\\) not used: \\d+ bytes, over the 16 MiB`),
    );
    const reader = ProfileReader.open(out);
    const files = new Set(reader.frames.map((f) => f?.filename));
    reader.close();
    expect([...files].some((f) => f?.endsWith('bigmap.js'))).toBe(true);
    expect([...files].some((f) => f?.endsWith('app.ts'))).toBe(false);
  });

  it('a command that never starts a recording: exit 2, one line, no profile left', () => {
    const out = path.join(dir, 'nothing.tach');
    const run = profpack(['record', '-o', out, '--', 'true']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^profpack: ERR_RECORD_NOT_STARTED: the command never started a recording .*\n$/);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('nothing'))).toEqual([]);
  });

  it('--rotate with a --dir that cannot be made: a coded error', () => {
    const notDir = script('plain-file', '');
    const run = profpack([
      'record',
      '--rotate',
      '1s',
      '--dir',
      path.join(notDir, 'sub'),
      '--',
      process.execPath,
      '-e',
      '0',
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^profpack: ERR_IO: cannot create the directory of the rotated files .*\(ENOTDIR\)\n$/);
  });
});

describe('reading a recording that was killed', () => {
  it('info, top, top --heap and flame say to run profpack recover on it', () => {
    const killed = path.join(dir, 'killed.tach');
    const writer = script(
      'killed-writer.js',
      `const { ProfileWriter } = require(${JSON.stringify(path.join(repoRoot, 'dist', 'index.js'))});\n` +
        `const w = new ProfileWriter(process.argv[2], { sampleIntervalUs: 1000 });\n` +
        "const f = w.internFrame({ filename: 'a.js', funcname: 'f', lineno: 1 });\n" +
        'for (let i = 0; i < 100; i++) w.writeStack(1, 0, 1000 + i, 0, [f]);\n' +
        "w.flush();\nprocess.kill(process.pid, 'SIGKILL');\n",
    );
    spawnSync(process.execPath, [writer, killed]);
    fs.copyFileSync(killed, path.join(dir, 'killed.bin'));
    for (const file of ['killed.tach', 'killed.bin'])
      for (const command of [['info'], ['top'], ['top', '--heap'], ['flame', '-o', 'k.html']]) {
        const run = profpack([...command, file]);
        expect(run.status).toBe(2);
        expect(run.stderr).toMatch(
          new RegExp(
            `^profpack: ERR_TACHYON_NOT_FINALIZED: Invalid magic number: 0x00000000: ${file} was never finalized .*run \`profpack recover ${file}\``,
          ),
        );
      }
  });
});
