/**
 * A Node recording says what recorded it (Node version, platform, pid, argv,
 * interval, mode) in a string CPython's reader reads past, and `info` shows
 * it in Node's words; a CPython file's `info` is unchanged.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { infoLines } from '../../../lib/cli/commands/info';
import { dumpProfile } from '../../../lib/tachyon/read/dump';
import { RECORDED_BY_PREFIX, encodeRecordedBy, findRecordedBy, type RecordedBy } from '../../../lib/recorded-by';
import { probeHeapSampler } from '../../../lib/record/program/heap/index';
import { ProfileReader } from '../../../lib/tachyon/index';
import { parseJsonExact, repoRoot, sharedPath } from '../../support/environment';
import { cpythonInterpreter } from '../../support/cpython.mjs';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-recorded-by-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const toolsDir = sharedPath('tools', 'cpython315');

let recording = '';
let app = '';

beforeAll(() => {
  app = path.join(dir, 'app.js');
  fs.writeFileSync(app, 'const end = Date.now() + 120; let x = 0; while (Date.now() < end) x += Math.sqrt(x + 1);\n');
  recording = path.join(dir, 'node.tach');
  const run = spawnSync(
    process.execPath,
    [cli, 'record', '-o', recording, '--interval-us', '500', '--', process.execPath, app, 'first', 'second'],
    { encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
});

function about(file: string): RecordedBy | undefined {
  const reader = ProfileReader.open(file);
  try {
    return findRecordedBy(reader.strings);
  } finally {
    reader.close();
  }
}

describe('what recorded a Node recording', () => {
  it('is in the file: Node version, platform, pid, the command without the preload, interval, mode', () => {
    const note = about(recording)!;
    expect(note).toMatchObject({
      runtime: 'node',
      version: process.version,
      platform: process.platform,
      arch: process.arch,
      intervalUs: 500,
      mode: 'wall',
      sourceMaps: true,
      cpu: true,
    });
    // No heap recorded, no heap sampler named.
    expect(note.heapSampler).toBeUndefined();
    expect(note.heapIntervalBytes).toBeUndefined();
    expect(note.pid).toBeGreaterThan(0);
    expect(note.pid).not.toBe(process.pid);
    expect(note.ppid).toBeGreaterThan(0);
    expect(note.argv.slice(-3)).toEqual([app, 'first', 'second']);
    expect(note.argv.join(' ')).not.toMatch(/preload\.js/);
    expect(note.processStartUs).toBeGreaterThan(Date.UTC(2020, 0) * 1000);
  });

  it("CPython 3.15.2's own reader reads the file, to the same info and samples as profpack", () => {
    const python = cpythonInterpreter();
    const list = path.join(dir, 'list.txt');
    fs.writeFileSync(list, recording);
    const run = spawnSync(python, [path.join(repoRoot, 'test', 'support', 'cpython_dump_many.py'), toolsDir, list], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    });
    expect(run.status, run.stderr).toBe(0);
    const want = parseJsonExact(run.stdout.trim()) as { accepted: boolean; info: unknown; samples: unknown[] };
    const got = dumpProfile(recording);
    expect(want.accepted).toBe(true);
    expect(got.info).toEqual(want.info);
    expect(got.samples).toEqual(want.samples);
    expect(want.samples.length).toBeGreaterThan(0);
  });

  it('findRecordedBy ignores strings that are not a well-formed note', () => {
    fc.assert(
      fc.property(fc.array(fc.string()), fc.string(), (strings, tail) => {
        expect(findRecordedBy(strings.filter((s) => !s.startsWith(RECORDED_BY_PREFIX)))).toBeUndefined();
        expect(findRecordedBy([...strings, RECORDED_BY_PREFIX + tail.replace(/^\{/, '')])).toBeUndefined();
      }),
    );
    const note = about(recording)!;
    expect(findRecordedBy(['a', encodeRecordedBy(note), 'b'])).toEqual(note);
  });
});

describe('what recorded it, in version 2', () => {
  it("is kept in full as the model section's producer fields, and back in version 1 as the note", () => {
    const v2 = path.join(dir, 'node-v2.tach');
    const back = path.join(dir, 'node-v1-again.tach');
    for (const [input, output, version] of [
      [recording, v2, '2'],
      [v2, back, '1'],
    ] as const) {
      const run = spawnSync(process.execPath, [cli, 'convert', input, '-o', output, '--tachyon-version', version], {
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).toBe(0);
    }
    const note = about(recording)!;
    const reader = ProfileReader.open(v2);
    try {
      expect(reader.info.version).toBe(2);
      expect(reader.strings.some((s) => s.startsWith(RECORDED_BY_PREFIX))).toBe(false);
      expect(reader.model!.producer).toEqual(note);
      expect(findRecordedBy(reader.strings, reader.model!.producer)).toEqual(note);
    } finally {
      reader.close();
    }
    expect(about(back)).toEqual(note);
    const text = infoLines(v2).join('\n');
    expect(text).not.toMatch(/python|features/i);
    expect(text).toMatch(/^format: +Tachyon version 2, /m);
    expect(text).toMatch(
      new RegExp(
        `^recorded by: +Node ${process.version.replace(/\./g, '\\.')} on ${process.platform}-${process.arch} .*pid ${note.pid} \\(parent ${note.ppid}\\)`,
        'm',
      ),
    );
    expect(text).toMatch(/^source maps: +frames read at their source while recording$/m);
    // A version-2 record may stand for many samples: info counts samples, as on the version-1 file.
    const samples = (t: string) => Number(/^samples: +(\d+)/m.exec(t)![1]);
    expect(samples(text)).toBe(samples(infoLines(recording).join('\n')));
  });
});

describe('what sampled a heap recording', () => {
  /** Records the app with `flags` under `env` (added to this process's: PROFPACK_BACKEND stays as the test runs). */
  function recordHeap(name: string, flags: string[], env: NodeJS.ProcessEnv = {}): string {
    const out = path.join(dir, name);
    const run = spawnSync(process.execPath, [cli, 'record', ...flags, '-o', out, '--', process.execPath, app], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    expect(run.status, run.stderr).toBe(0);
    return out;
  }

  it("names the heap sampler this backend's probe picks, its interval, and CPU sampling on or off", () => {
    // The recorded process probes as this one does: same Node, same PROFPACK_BACKEND (js: the inspector).
    const probe = probeHeapSampler();
    const want = {
      heapSampler: probe.kind,
      ...(probe.reason === undefined ? {} : { heapSamplerReason: probe.reason }),
    };
    const withCpu = about(recordHeap('heap-cpu.tach', ['--heap', '--heap-interval', '256k']))!;
    expect(withCpu).toMatchObject({ cpu: true, heapIntervalBytes: 256 * 1024, intervalUs: 1000 });
    expect({ heapSampler: withCpu.heapSampler, heapSamplerReason: withCpu.heapSamplerReason }).toEqual(want);
    // The app allocates little: a heap recording with no sampled allocation still says what sampled it.
    expect(infoLines(path.join(dir, 'heap-cpu.tach')).join('\n')).toMatch(
      /^heap: +(no sampled allocation \(sampling interval 262,144 bytes\)|[\d,]+ sampled allocations)/m,
    );
    if (process.env.PROFPACK_BACKEND === 'js')
      expect(withCpu).toMatchObject({ heapSampler: 'inspector', heapSamplerReason: 'forced by PROFPACK_BACKEND=js' });
    const heapOnly = recordHeap('heap-only.tach', ['--heap', '--no-cpu']);
    expect(about(heapOnly)).toMatchObject({ ...want, cpu: false, heapIntervalBytes: 512 * 1024 });
    const text = infoLines(heapOnly).join('\n');
    expect(text).toMatch(/^cpu: +off \(record --no-cpu\)/m);
    expect(text).toMatch(
      probe.kind === 'native'
        ? /^heap sampler: +native \(V8's C\+\+ API: a poll forces no GC\)$/m
        : /^heap sampler: +inspector \(node:inspector: every poll is a full GC; .+\)$/m,
    );
  });

  it("names the inspector's reason when it was not the addon (forced here), in the file and in info", () => {
    const file = recordHeap('heap-inspector.tach', ['--heap'], { PROFPACK_HEAP_SAMPLER: 'inspector' });
    expect(about(file)).toMatchObject({
      cpu: true,
      heapSampler: 'inspector',
      heapSamplerReason: 'forced by PROFPACK_HEAP_SAMPLER=inspector',
    });
    const text = infoLines(file).join('\n');
    expect(text).toMatch(/^interval: +1000 us/m);
    const sampler = /^heap sampler: +inspector \(node:inspector: every poll is a full GC; (.+)\)$/m.exec(text);
    expect(sampler?.[1]).toBe('forced by PROFPACK_HEAP_SAMPLER=inspector');
  });
});

describe('profpack info', () => {
  it('on a Node recording: Node fields, no Python field, the start as a date, the sample rate with its reason, statuses', () => {
    const text = infoLines(recording).join('\n');
    expect(text).not.toMatch(/python|features/i);
    expect(text).toMatch(
      new RegExp(
        `^recorded by: +Node ${process.version.replace(/\./g, '\\.')} on ${process.platform}-${process.arch} .*pid \\d+`,
        'm',
      ),
    );
    expect(text).toMatch(new RegExp(`^command: +.*${path.basename(app)} first second$`, 'm'));
    const start = /^start: +(\S+)$/m.exec(text)![1]!;
    expect(new Date(start).toISOString()).toBe(start);
    expect(Math.abs(Date.parse(start) - fs.statSync(recording).mtimeMs)).toBeLessThan(10 * 60_000);
    expect(text).toMatch(/^interval: +500 us \(asks for 2000 samples\/s per thread\)$/m);
    expect(text).toMatch(/^mode: +wall: V8's sampler/m);
    expect(text).toMatch(
      /^sample rate: +[\d.]+\/s per thread, \d+% of what the interval asks: V8's sampler thread waits the interval after each tick/m,
    );
    const status = /^status: +on-cpu (\d+) .*idle (\d+) .*gc (\d+)/m.exec(text)!;
    const samples = Number(/^samples: +(\d+)$/m.exec(text)![1]);
    expect(Number(status[1]) + Number(status[2]) + Number(status[3])).toBe(samples);
  });

  it('on a CPython file: as before (Python version, mode, features, start in µs)', () => {
    const vector = sharedPath('vectors', 'tachyon', 's01_single_thread_none.bin');
    const text = infoLines(vector).join('\n');
    expect(text).toMatch(/^format: +Tachyon version 1, Python 3\.15\.2, little-endian, uncompressed$/m);
    expect(text).toMatch(/^start: +1000000 us$/m);
    expect(text).toMatch(/^features: /m);
    expect(text).not.toMatch(/recorded by/);
  });
});
