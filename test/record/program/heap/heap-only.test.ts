// test tier: slow (heap-only recordings of real programs, ~26 s)
/**
 * A heap-only recording (issue 27): `profpack record --heap --no-cpu` and `startRecording({ heap, cpu: false })`
 * never start V8's CPU profiler (its thread, "v8:ProfEvntProc", never appears), and write a version-2 file with
 * the heap events and no CPU sample, which `info`, `top`, `leaks` and `flame` read as the heap it is.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { findRecordedBy } from '../../../../lib/recorded-by';
import { ProfileReader } from '../../../../lib/tachyon/index';
import { buildForTests } from '../../../support/build';
import { SLOWDOWN } from '../../../support/environment';

const t = buildForTests('profpack-heap-only-');
const { dir } = t;

/** Prints whether V8's CPU profiler thread runs in this process now (null where /proc/self/task does not). */
const THREAD_CHECK = `
function reportProfilerThread() {
  const fs = require('fs');
  let names = null;
  try {
    const comm = (t) => fs.readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim();
    names = fs.readdirSync('/proc/self/task').map(comm);
  } catch {}
  console.log(JSON.stringify({ profilerThread: names === null ? null : names.includes('v8:ProfEvntProc') }));
}
`;

/** Keeps ~25 KB every 10 ms in a global array (leak) and drops ten times that (garbage), for 1.5 s. */
const APP = `${THREAD_CHECK}
globalThis.kept = [];
function leak() { for (let i = 0; i < 100; i++) globalThis.kept.push(new Array(32).fill(i)); }
function garbage() { let n = 0; for (let i = 0; i < 1000; i++) n += new Array(32).fill(i).length; return n; }
const end = Date.now() + 1500;
const timer = setInterval(() => {
  leak();
  garbage();
  if (Date.now() > end) {
    clearInterval(timer);
    reportProfilerThread();
  }
}, 10);
`;

/** Sampled often enough, and polled at every harvest, for a 1.5-s program's leak to show over several polls. */
const HEAP_FLAGS = ['--heap', '--heap-interval', '64k', '--harvest-ms', '250', '--heap-polls', 'harvest'];

let app = '';
let file = '';
let recordRun: ReturnType<typeof t.cli>;

/** Whether the recorded program saw V8's CPU profiler thread while recording, from its stdout. */
function profilerThread(stdout: string): boolean | null {
  const line = stdout.split('\n').find((l) => l.startsWith('{"profilerThread"'))!;
  return (JSON.parse(line) as { profilerThread: boolean | null }).profilerThread;
}

const expectThread = (stdout: string, running: boolean): void =>
  expect(profilerThread(stdout)).toBe(process.platform === 'linux' ? running : null);

beforeAll(() => {
  app = path.join(dir, 'app.js');
  fs.writeFileSync(app, APP);
  file = path.join(dir, 'heap-only.tach');
  recordRun = t.cli(['record', ...HEAP_FLAGS, '--no-cpu', '-o', file, '--', process.execPath, app]);
}, 120_000 * SLOWDOWN);

describe('record --heap --no-cpu', () => {
  it("never starts V8's CPU profiler (with CPU sampling its thread is there)", () => {
    expect(recordRun.status, recordRun.stderr).toBe(0);
    expectThread(recordRun.stdout, false);
    expect(recordRun.stderr).toMatch(/wrote \S*heap-only\.tach: heap only, no CPU samples/);
    const withCpu = t.cli(['record', '--heap', '-o', path.join(dir, 'cpu.tach'), '--', process.execPath, app]);
    expect(withCpu.status, withCpu.stderr).toBe(0);
    expectThread(withCpu.stdout, true);
  });

  it('writes a version-2 file with heap events, no CPU sample, and says it in what recorded it', () => {
    const reader = ProfileReader.open(file);
    try {
      expect(reader.info.version).toBe(2);
      expect([...reader.samples()]).toHaveLength(0);
      expect(reader.heap!.allocations).toBeGreaterThan(0);
      expect(reader.heap!.intervalBytes).toBe(64 * 1024);
      const about = findRecordedBy(reader.strings, reader.model?.producer)!;
      expect(about.cpu).toBe(false);
      expect(about.heapIntervalBytes).toBe(64 * 1024);
    } finally {
      reader.close();
    }
  });

  it('info, top (with and without a sample type), leaks and flame read it as a heap', () => {
    const info = t.cli(['info', file]);
    expect(info.status, info.stderr).toBe(0);
    expect(info.stdout).toMatch(/^cpu: +off \(record --no-cpu\)/m);
    expect(info.stdout).not.toMatch(/^(samples|interval|sample rate):/m);
    expect(info.stdout).toMatch(/^heap: +[\d,]+ sampled allocations/m);
    expect(info.stdout).toMatch(/^heap sampler: +(native|inspector) /m);
    const firstRow = (stdout: string) => stdout.split('\n')[1]!;
    const inuse = t.cli(['top', '--sample-type', 'inuse_space', file]);
    expect(inuse.status, inuse.stderr).toBe(0);
    expect(firstRow(inuse.stdout)).toMatch(/\bleak\b/);
    // No sample type: the heap in use, said so, not an empty table of CPU samples.
    const plain = t.cli(['top', file]);
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stdout).toBe(inuse.stdout);
    expect(plain.stderr).toMatch(/heap-only recording \(record --no-cpu\): no CPU samples/);
    const alloc = t.cli(['top', '--sample-type', 'alloc_space', file]);
    expect(alloc.status, alloc.stderr).toBe(0);
    expect(alloc.stdout).toMatch(/alloc_space\/bytes total/);
    const leaks = t.cli(['leaks', '--json', file]);
    expect(leaks.status, leaks.stderr).toBe(0);
    expect((JSON.parse(leaks.stdout) as { suspects: { funcname: string }[] }).suspects[0]!.funcname).toBe('leak');
    for (const args of [['--heap'], []]) {
      const html = path.join(dir, `flame${args.length}.html`);
      const flame = t.cli(['flame', ...args, file, '-o', html]);
      expect(flame.status, flame.stderr).toBe(0);
      expect(fs.readFileSync(html, 'utf8')).toMatch(/\bleak\b/);
    }
  });

  it('rotates: each file holds heap events and starts where the last one ended', () => {
    const rotated = path.join(dir, 'rotated');
    const run = t.cli(['record', ...HEAP_FLAGS, '--no-cpu', '--rotate', '400ms', '--dir', rotated, '--', 'node', app]);
    expect(run.status, run.stderr).toBe(0);
    const files = fs.readdirSync(rotated).sort();
    expect(files.length).toBeGreaterThanOrEqual(2);
    let lastStart = 0n;
    for (const name of files) {
      const reader = ProfileReader.open(path.join(rotated, name));
      try {
        expect(reader.heap, name).not.toBeNull();
        expect(reader.info.startTimeUs).toBeGreaterThan(BigInt(Date.UTC(2020, 0)) * 1000n);
        expect(reader.info.startTimeUs).toBeGreaterThanOrEqual(lastStart);
        lastStart = reader.info.startTimeUs;
      } finally {
        reader.close();
      }
    }
    const top = t.cli(['top', '--sample-type', 'inuse_space', rotated]);
    expect(top.status, top.stderr).toBe(0);
    expect(top.stdout.split('\n')[1]).toMatch(/\bleak\b/);
  });

  it.each([
    [['--no-cpu'], /--no-cpu records the heap alone: it needs --heap/],
    [['--heap', '--no-cpu', '--interval-us', '500'], /--interval-us is for CPU sampling: it excludes --no-cpu/],
    [['--heap', '--no-cpu', '--workers'], /--workers is for CPU sampling: it excludes --no-cpu/],
  ])('record %j is a usage error', (flags, message) => {
    const run = t.cli(['record', ...flags, '-o', path.join(dir, 'never.tach'), '--', process.execPath, app]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^profpack: ERR_INVALID_ARGUMENT: /);
    expect(run.stderr).toMatch(message);
    expect(fs.existsSync(path.join(dir, 'never.tach'))).toBe(false);
  });
});

describe('startRecording({ heap, cpu: false })', () => {
  /** Runs `body` in a Node process with profpack's build as `p`; returns its stdout. */
  function node(body: string): string {
    const run = spawnSync(process.execPath, ['-e', `const p = require(${JSON.stringify(t.build.dist)});\n${body}`], {
      encoding: 'utf8',
      cwd: dir,
      timeout: 120_000 * SLOWDOWN,
    });
    expect(run.status, run.stderr).toBe(0);
    return run.stdout;
  }

  it('inline and through the writer process: heap events, no CPU sample, no CPU profiler', () => {
    for (const writer of ['inline', 'process']) {
      const out = path.join(dir, `library-${writer}.tach`);
      const stdout = node(
        `const r = p.startRecording({ out: ${JSON.stringify(out)}, writer: '${writer}', ` +
          'heap: { intervalBytes: 65536 }, cpu: false, handleExit: false });\n' +
          'globalThis.kept = []; for (let i = 0; i < 3000; i++) kept.push(new Array(64).fill(i));\n' +
          'r.harvest(); reportProfilerThread(); const s = r.stop(); console.log(JSON.stringify(s));\n' +
          THREAD_CHECK,
      );
      const summary = JSON.parse(stdout.trim().split('\n').at(-1)!) as { samples: number; heapEvents: number };
      expect(summary.samples).toBe(0);
      expect(summary.heapEvents).toBeGreaterThan(0);
      expectThread(stdout, false);
      const reader = ProfileReader.open(out);
      try {
        expect([...reader.samples()]).toHaveLength(0);
        expect(reader.heap!.allocations).toBeGreaterThan(0);
        expect(reader.heap!.intervalBytes).toBe(65536);
        expect(findRecordedBy(reader.strings)).toMatchObject({ cpu: false, heapIntervalBytes: 65536 });
      } finally {
        reader.close();
      }
    }
  });

  it('refuses cpu: false without heap, with workers, and a cpu that is not a boolean', () => {
    const stdout = node(
      'const bad = [{ cpu: false }, { cpu: false, heap: true, workers: true }, { cpu: 0, heap: true }];\n' +
        'const codes = bad.map((o) => {\n' +
        "  try { p.startRecording({ ...o, writer: 'inline', out: 'x.tach' }); return 'started'; }\n" +
        '  catch (e) { return e instanceof p.ProfpackError ? e.code : String(e); }\n' +
        '});\n' +
        'console.log(JSON.stringify(codes));',
    );
    expect(JSON.parse(stdout)).toEqual(['ERR_INVALID_ARGUMENT', 'ERR_INVALID_ARGUMENT', 'ERR_INVALID_ARGUMENT']);
    expect(fs.existsSync(path.join(dir, 'x.tach'))).toBe(false);
  });
});
