// test tier: slow (a 20 M-sample file through the compiled CLI, peak RSS measured, ~111 s)
// The profpack command as an agent's operator would meet it (issue 15): peak
// RSS on a 20 M-sample REPEAT file, EPIPE and a full stdout, special files,
// and a file truncated while it is read. Runs the compiled CLI in child
// processes (test/support/build.ts) on the backend PROFPACK_BACKEND selects.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileWriter } from '../../lib/tachyon/index';
import { compileBuild, type Build } from '../support/build';
import { EMULATED, SLOWDOWN } from '../support/environment';

const MiB = 1024;
// Under qemu-user a process's RSS also holds the emulator's translated code and heap: `node -e 0` peaks at 107 MB emulated against 40 MB native, `info` on this file at
// 493 MB against 324 MB (Node 24 arm64 under qemu / Node 24 x64). The bound grows by that much there; memory that
// grows with the samples (20 M bigints or objects: ≥ 480 MB) still fails it.
const EMULATOR_RSS_KIB = EMULATED ? 256 * MiB : 0;
const PEAK_RSS_LIMIT_KIB = 400 * MiB + EMULATOR_RSS_KIB;
const SAMPLES = 20_000_000;

let build: Build;
let dir: string;
let repeatFile: string;
let server: Server;
const special: Record<string, string> = {};

function cli(args: string[], env: NodeJS.ProcessEnv = {}, preload: string[] = []): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [...preload.flatMap((p) => ['--require', p]), build.cli, ...args], {
    encoding: 'utf8',
    cwd: dir,
    timeout: 240_000 * SLOWDOWN,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 1 << 20,
  });
}

beforeAll(async () => {
  build = compileBuild();
  dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-cli-reliability-'));
  // 20 M samples of one stack: REPEAT records of 3 bytes a sample, a few KB once compressed.
  repeatFile = path.join(dir, 'repeat-20m.bin');
  const w = new ProfileWriter(repeatFile, { sampleIntervalUs: 1000, compression: 'zstd' });
  const stack = [
    w.internFrame({ filename: 'app.py', funcname: 'spin', lineno: 3 }),
    w.internFrame({ filename: 'app.py', funcname: 'main', lineno: 9 }),
  ];
  // One interval apart, as a busy loop samples: the model keeps the run as one record (docs/formats.md, Times).
  for (let i = 0; i < SAMPLES; i++) w.writeStack(1, 0, 1_000_000 + i * 1000, 0, stack);
  w.finalize();
  special.fifo = path.join(dir, 'in.fifo');
  expect(spawnSync('mkfifo', [special.fifo]).status).toBe(0);
  // An empty one: `top DIR` reads a directory's profiles (lib/fleet), and this folder holds repeat-20m.bin.
  special.directory = fs.mkdtempSync(path.join(dir, 'empty-'));
  special['character device'] = '/dev/zero';
  special.socket = path.join(dir, 'in.sock');
  server = createServer();
  await new Promise<void>((resolve) => server.listen(special.socket, resolve));
  // A whole tsc build and 20 M samples: on a busy 2-core machine this took 140 s, so it has the suite's hook timeout.
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  build?.cleanup();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe(`peak RSS of every command on a ${SAMPLES / 1e6} M-sample REPEAT file`, () => {
  const commands: [string, string[], number][] = [
    ['info', ['info', '@'], 0],
    ['top', ['top', '@'], 0],
    ['dump', ['dump', '@'], 0],
    ['dump --json', ['dump', '--json', '@'], 0],
    ['convert --to tachyon', ['convert', '@', '--to', 'tachyon', '-o', 'out.bin', '-q'], 0],
    ['convert --to collapsed', ['convert', '@', '--to', 'collapsed', '-o', 'out.collapsed', '-q'], 0],
    // A REPEAT run is one weighted record: pprof streams its records and speedscope holds the 20 M samples in a
    // few thousand.
    ['convert --to pprof', ['convert', '@', '--to', 'pprof', '-o', 'out.pprof', '-q'], 0],
    ['convert --to speedscope', ['convert', '@', '--to', 'speedscope', '-o', 'out.speedscope.json', '-q'], 0],
    // V8's format lists every sample: refused past its cap.
    ['convert --to cpuprofile (refused)', ['convert', '@', '--to', 'cpuprofile', '-o', 'out.cpuprofile'], 2],
  ];
  for (const [name, args, status] of commands) {
    it(
      `${name}: exit ${status}, peak RSS <= ${PEAK_RSS_LIMIT_KIB / MiB} MB`,
      () => {
        const report = path.join(dir, `rss-${name.replace(/\W+/g, '-')}`);
        const run = spawnSync(
          'bash',
          [
            '-c',
            `"$0" --require "$1" "$2" "\${@:3}" > /dev/null`,
            process.execPath,
            path.join(__dirname, 'child', 'report-rss.cjs'),
            build.cli,
            ...args.map((a) => (a === '@' ? repeatFile : a)),
          ],
          {
            encoding: 'utf8',
            cwd: dir,
            timeout: 300_000 * SLOWDOWN,
            env: { ...process.env, PROFPACK_RSS_REPORT: report },
          },
        );
        expect(run.status, run.stderr).toBe(status);
        if (status === 2)
          expect(run.stderr).toMatch(
            /^profpack: ERR_CONVERT_TOO_MANY_SAMPLES: a \.cpuprofile lists every sample, and this thread has 20000000; .*\n$/,
          );
        const peakKiB = Number(fs.readFileSync(report, 'utf8'));
        expect(peakKiB).toBeGreaterThan(0);
        expect(peakKiB).toBeLessThanOrEqual(PEAK_RSS_LIMIT_KIB);
      },
      300_000 * SLOWDOWN,
    );
  }
});

describe('standard output that goes away or fills up', () => {
  for (const args of [['dump', '--json'], ['dump'], ['info'], ['top']]) {
    it(
      `${args.join(' ')} FILE | head -1: exits 0, nothing on stderr`,
      () => {
        const run = spawnSync(
          'bash',
          [
            '-c',
            `"$0" "$1" "\${@:2}" | head -1 > /dev/null; echo "\${PIPESTATUS[0]}" >&2`,
            process.execPath,
            build.cli,
            ...args,
            repeatFile,
          ],
          {
            encoding: 'utf8',
            timeout: 240_000 * SLOWDOWN,
          },
        );
        expect(run.stderr).toBe('0\n');
      },
      240_000 * SLOWDOWN,
    );
  }

  it(
    'a full stdout (/dev/full) is one ERR_IO line and exit 2',
    () => {
      for (const args of [['dump', '--json'], ['info']]) {
        const run = spawnSync(
          'bash',
          ['-c', `"$0" "$1" "\${@:2}" > /dev/full`, process.execPath, build.cli, ...args, repeatFile],
          { encoding: 'utf8', timeout: 240_000 * SLOWDOWN },
        );
        expect(run.status).toBe(2);
        expect(run.stderr).toBe('profpack: ERR_IO: cannot write standard output: no space left on device (ENOSPC)\n');
      }
    },
    240_000 * SLOWDOWN,
  );

  it('a Tachyon output on /dev/full says "writing the profile failed" once', () => {
    const run = cli(['convert', repeatFile, '--to', 'tachyon', '-o', '/dev/full']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      /^profpack: ERR_TACHYON_WRITE_IO: writing the profile failed while [^:]+: (ENOSPC: )?[Nn]o space left on device.*\n$/,
    );
    expect(run.stderr.split('writing the profile failed')).toHaveLength(2);
  });
});

describe('files that are not regular files', () => {
  for (const kind of ['fifo', 'directory', 'character device', 'socket']) {
    it(
      `a ${kind}: info, top, dump, convert refuse it at once with ERR_NOT_REGULAR_FILE`,
      () => {
        const file = special[kind]!;
        for (const args of [
          ['info', file],
          ['top', file],
          ['dump', file],
          ['dump', '--json', file],
          ['convert', file, '-o', 'x.pprof'],
        ]) {
          const run = cli(args);
          expect(run.signal, `${args.join(' ')} was killed (blocked)`).toBeNull();
          expect(run.status).toBe(2);
          // top takes a directory as many profiles (lib/fleet): this one holds none.
          if (kind === 'directory' && args[0] === 'top')
            expect(run.stderr).toBe(`profpack: ERR_FLEET_NO_INPUT: ${file} holds no profile files\n`);
          else
            expect(run.stderr).toBe(
              `profpack: ERR_NOT_REGULAR_FILE: ${file} is a ${kind === 'fifo' ? 'FIFO' : kind}, not a regular file\n`,
            );
        }
      },
      120_000 * SLOWDOWN,
    );
  }

  it('a missing file: ERR_IO (any format) or ERR_FLEET_NO_INPUT (top: files or directories), with the path', () => {
    const missing = path.join(dir, 'missing.bin');
    // info reads a file's first bytes to tell its format (any format): ERR_IO.
    expect(cli(['info', missing]).stderr).toBe(
      `profpack: ERR_IO: cannot open ${missing}: no such file or directory (ENOENT)\n`,
    );
    const convert = cli(['convert', missing, '-o', 'x.pprof']);
    expect(convert.status).toBe(2);
    expect(convert.stderr).toBe(`profpack: ERR_IO: cannot open ${missing}: no such file or directory (ENOENT)\n`);
    const top = cli(['top', missing]);
    expect(top.status).toBe(2);
    expect(top.stderr).toBe(
      `profpack: ERR_FLEET_NO_INPUT: cannot read ${missing}: no such file or directory (ENOENT)\n`,
    );
  });
});

describe('a file truncated while the command reads it', () => {
  it(
    'top: exit 2 with ERR_TACHYON_FILE_CHANGED, not a signal',
    () => {
      // Uncompressed and many distinct stacks: the native reader decodes the mapping in place, page after page.
      const file = path.join(dir, 'shrinking.bin');
      const w = new ProfileWriter(file, { sampleIntervalUs: 1000, compression: 'none' });
      const frames = Array.from({ length: 64 }, (_, i) =>
        w.internFrame({ filename: 'app.py', funcname: `f${i}`, lineno: i }),
      );
      for (let i = 0; i < 400_000; i++)
        w.writeStack(1, 0, 1_000_000 + i * 1000, 0, [frames[i % 64]!, frames[(i * 7) % 64]!, frames[(i >> 6) % 64]!]);
      w.finalize();
      const run = cli(
        ['top', file],
        { PROFPACK_DIST: build.dist, PROFPACK_TRUNCATE_FILE: file, PROFPACK_TRUNCATE_AFTER: '1000' },
        [path.join(__dirname, 'child', 'truncate-mid-read.cjs')],
      );
      expect(run.signal).toBeNull();
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(
        /^profpack: ERR_TACHYON_FILE_CHANGED: the file changed since it was opened \(size \d+ -> 4096\): .*shrinking\.bin/,
      );
    },
    120_000 * SLOWDOWN,
  );
});
