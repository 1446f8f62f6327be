import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convert, openProfile } from '../../lib/convert/convert';
import { MemoryProfile, NodeStatus, copyProfile, type Frame, type ProfileSource } from '../../lib/convert/model';
import { createTachyonSink, openTachyon } from '../../lib/convert/tachyon';
import { aggregate } from '../../lib/query/aggregate';
import { compileBuild, type Build } from './build';
import { SLOWDOWN } from '../shared';
import { acceptedVectors, keepCpuProfile, keepPprof, keepSpeedscope, modelFromExpected, project, readExpected, vectorDir, type Keep } from './helpers';

let build: Build;
let work: string;
beforeAll(() => {
  build = compileBuild();
  work = mkdtempSync(path.join(tmpdir(), 'profpack-tachyon-conv-'));
});
afterAll(() => {
  build?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

const everything: Keep = { time: true, status: true, frame: (f) => JSON.stringify([f.filename, f.funcname, f.lineno, f.endLineno, f.column, f.endColumn, f.opcode]) };

function writeTachyon(model: ProfileSource, file: string, compression: 'zstd' | 'none'): void {
  const sink = createTachyonSink(file, { sampleIntervalUs: model.meta.sampleIntervalUs, startTimeUs: model.meta.startTimeUs, compression });
  copyProfile(model, sink);
  sink.finalize();
}

/**
 * Samples with every field, each thread's in its order. Across threads a
 * Tachyon file is not in write order: CPython's writer holds a thread's
 * REPEAT run back until its stack changes (tachyon-format.md §5.3).
 */
function inOrder(src: ProfileSource): string[] {
  const lines = [...src.samples()].map((s) => `${s.threadId}@${s.interpreterId} ${s.timestampUs} ${s.status} ${Array.from(s.stack, (i) => everything.frame(src.frames[i]!)).join('|')}`);
  const thread = (line: string) => line.slice(0, line.indexOf(' '));
  return lines.map((line, i) => ({ line, i })).sort((a, b) => (thread(a.line) < thread(b.line) ? -1 : thread(a.line) > thread(b.line) ? 1 : a.i - b.i)).map((x) => x.line);
}

describe('Tachyon ↔ model', () => {
  const names = acceptedVectors();
  for (const name of names) {
    it(`${name}: read as CPython reads it, written back and read again unchanged`, () => {
      const src = openTachyon(path.join(vectorDir, `${name}.bin`));
      const fromCpython = modelFromExpected(readExpected(name));
      expect(inOrder(src)).toEqual(inOrder(fromCpython));
      expect(src.meta.startTimeUs).toBe(fromCpython.meta.startTimeUs);
      for (const compression of ['zstd', 'none'] as const) {
        const file = path.join(work, `${name}.${compression}.tach`);
        writeTachyon(src, file, compression);
        const back = openTachyon(file);
        expect(inOrder(back)).toEqual(inOrder(fromCpython));
        back.close();
      }
      src.close();
    });
  }

  it('random profiles survive model → Tachyon → model exactly (u64 ids and times, every status byte, 256-deep stacks)', () => {
    const str = fc.string({ maxLength: 8, unit: 'grapheme' });
    const frameArb: fc.Arbitrary<Frame> = fc.record({
      filename: str,
      funcname: str,
      lineno: fc.integer({ min: 0, max: 1_000_000 }),
      endLineno: fc.integer({ min: 0, max: 1_000_000 }),
      column: fc.integer({ min: 0, max: 10_000 }),
      endColumn: fc.integer({ min: 0, max: 10_000 }),
      opcode: fc.option(fc.integer({ min: 0, max: 254 }), { nil: null }),
    });
    let n = 0;
    fc.assert(
      fc.property(
        fc.array(frameArb, { minLength: 1, maxLength: 10 }),
        fc.array(fc.tuple(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.integer({ min: 0, max: 0xffff_ffff })), { minLength: 1, maxLength: 4 }),
        fc.array(fc.record({ t: fc.nat(), time: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), status: fc.integer({ min: 0, max: 255 }), stack: fc.array(fc.nat(), { maxLength: 256 }) }), { maxLength: 40 }),
        fc.constantFrom<'zstd' | 'none'>('zstd', 'none'),
        (frames, threads, samples, compression) => {
          const model = new MemoryProfile({ startTimeUs: 5n, sampleIntervalUs: 1000n });
          // Tachyon stores end positions as deltas from the start: keep them consistent as CPython's reader returns them.
          const ids = frames.map((f) => model.internFrame({ ...f, endLineno: Math.max(f.lineno!, f.endLineno!), endColumn: Math.max(f.column!, f.endColumn!) }));
          for (const s of samples) {
            const [tid, interp] = threads[s.t % threads.length]!;
            model.writeStack(tid, interp, s.time, s.status, s.stack.map((i) => ids[i % ids.length]!));
          }
          const file = path.join(work, `random-${n++}.tach`);
          writeTachyon(model, file, compression);
          const back = openTachyon(file);
          expect(inOrder(back)).toEqual(inOrder(model));
          back.close();
          rmSync(file);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('convert() on the shared vectors', () => {
  const cases: [string, string, Keep][] = [
    ['cpuprofile', 'cpuprofile', keepCpuProfile],
    ['pprof', 'pb.gz', keepPprof],
    ['speedscope', 'speedscope.json', keepSpeedscope],
  ];
  for (const name of ['s02_threads_interleaved_zstd', 's11_interpreters_none', 's12_status_flags_zstd', 's20_random_mix_zstd', 'r01_cpu_wall_none', 'r02_cpu_wall_zstd']) {
    it(`${name}: Tachyon → each format → Tachyon keeps what the format keeps`, () => {
      const input = path.join(vectorDir, `${name}.bin`);
      const original = modelFromExpected(readExpected(name));
      for (const [format, ext, keep] of cases) {
        const out = path.join(work, `${name}.${ext}`);
        const progress: number[] = [];
        const summary = convert(input, out, { onProgress: (done) => progress.push(done) });
        expect(summary).toMatchObject({ from: 'tachyon', to: format, samples: original.sampleCount });
        expect(progress.at(-1)).toBe(original.sampleCount);
        const tach = path.join(work, `${name}.${format}.back.tach`);
        expect(convert(out, tach, { to: 'tachyon' }).samples).toBe(original.sampleCount);
        const back = openProfile(tach);
        expect(project(back, keep)).toEqual(project(original, keep));
        back.close();
      }
    });
  }
});

/** Whether a Tachyon file's header has been patched (magic present). */
function finalized(file: string): boolean {
  try {
    return readFileSync(file).subarray(0, 4).some((b) => b !== 0);
  } catch {
    return false;
  }
}

function cli(args: string[], options: { cwd?: string } = {}) {
  const run = spawnSync(process.execPath, [build.cli, ...args], { encoding: 'utf8', cwd: options.cwd ?? work, timeout: 120_000 });
  return { code: run.status, signal: run.signal, stdout: run.stdout, stderr: run.stderr };
}

describe('profpack record', () => {
  it('records the embedded workload into a Tachyon file: its functions, 1-based positions, MAIN_THREAD + ON_CPU', () => {
    const out = path.join(work, 'workload.tach');
    const r = cli(['record', '--interval-us', '500', '--out', out, '--', process.execPath, path.join(build.dist, 'demo', 'workload.js'), '600']);
    expect(r.stderr).toContain('wrote');
    expect(r.code).toBe(0);
    const src = openTachyon(out);
    expect(src.meta.sampleIntervalUs).toBe(500n);
    const samples = [...src.samples()];
    expect(samples.length).toBeGreaterThan(200);
    const names = new Set(src.frames.map((f) => f.funcname));
    for (const fn of ['parseExpression', 'evaluate', 'jsonRound', 'scanLogs', 'sortRound']) expect(names).toContain(fn);
    const evaluate = src.frames.find((f) => f.funcname === 'evaluate')!;
    expect(evaluate.filename).toMatch(/demo\/workload\.js$/);
    expect(evaluate.lineno).toBeGreaterThan(1);
    expect(evaluate.column).toBeGreaterThan(0);
    for (const s of samples) {
      expect(s.threadId).toBe(0n);
      expect(s.status & NodeStatus.MainThread).toBe(NodeStatus.MainThread);
    }
    expect(samples.filter((s) => s.status & NodeStatus.OnCpu).length).toBeGreaterThan(samples.length / 2);
    const top = aggregate(src, { sort: 'total', limit: 0 }).rows.map((row) => row.funcname);
    expect(top).toContain('runWorkload');
    src.close();
  });

  // Under emulation (SLOWDOWN > 1) the sampler and the harvest timer run slower
  // too: the programs spin longer and a harvest may be later, so the same
  // counts still hold.
  const SPIN_MS = 300 * SLOWDOWN;

  const target = (body: string) => {
    const file = path.join(work, `target-${Math.random().toString(36).slice(2)}.js`);
    // Spins for `ms` of this process's CPU time, not of the wall clock: on a loaded machine it runs
    // longer, and V8 (which samples a thread when it runs) still takes the samples the floors expect.
    writeFileSync(file, ['function profpackSpin(ms) { const end = process.cpuUsage().user + ms * 1000; let x = 0; while (process.cpuUsage().user < end) for (let i = 0; i < 1000; i++) x += Math.sqrt(x + i); return x; }', body].join('\n'));
    return file;
  };

  it('finalizes on SIGTERM (and exits as the signal did), on an uncaught exception, and on process.exit', () => {
    const runs = [
      { body: `profpackSpin(${SPIN_MS}); process.kill(process.pid, 'SIGTERM'); setTimeout(() => {}, 10000);`, code: 143 },
      { body: `profpackSpin(${SPIN_MS}); throw new Error('boom');`, code: 1 },
      { body: `profpackSpin(${SPIN_MS}); process.exit(7);`, code: 7 },
    ];
    for (const { body, code } of runs) {
      const out = path.join(work, `end-${code}.tach`);
      const r = cli(['record', '--harvest-ms', '100000', '--out', out, '--', process.execPath, target(body)]);
      expect(r.code).toBe(code);
      const src = openTachyon(out);
      // Every frame of the function: V8's hot lines make the leaf one frame per line.
    const spin = new Set(src.frames.flatMap((f, k) => (f.funcname === 'profpackSpin' ? [k] : [])));
      expect(spin.size).toBeGreaterThan(0);
      expect([...src.samples()].filter((s) => Array.from(s.stack).some((f) => spin.has(f))).length).toBeGreaterThan(50);
      src.close();
    }
  });

  it('--workers: each worker thread is its own thread; --compression none', () => {
    const out = path.join(work, 'workers.tach');
    const body = [
      "const { Worker } = require('node:worker_threads');",
      `const w = new Worker('function profpackWorkerSpin(ms) { const end = process.cpuUsage().user + ms * 1000; let x = 0; while (process.cpuUsage().user < end) for (let i = 0; i < 1000; i++) x += Math.sqrt(x + i); return x; } profpackWorkerSpin(${400 * SLOWDOWN});', { eval: true });`,
      'w.on("exit", () => profpackSpin(50));',
    ].join('\n');
    const r = cli(['record', '--workers', '--compression', 'none', '--out', out, '--', process.execPath, target(body)]);
    expect(r.code).toBe(0);
    const src = openTachyon(out);
    expect(src.reader.info.compressionType).toBe(0);
    const threads = new Map<bigint, number>();
    for (const s of src.samples()) threads.set(s.threadId, (threads.get(s.threadId) ?? 0) + 1);
    expect([...threads.keys()].sort()).toEqual([0n, 1n]);
    // Every frame of the function: V8's hot lines make the leaf one frame per line.
    const spin = new Set(src.frames.flatMap((f, k) => (f.funcname === 'profpackWorkerSpin' ? [k] : [])));
    expect([...src.samples()].filter((s) => s.threadId === 1n && Array.from(s.stack).some((f) => spin.has(f))).length).toBeGreaterThan(50);
    src.close();
  });

  it('an output that cannot be created: exit 2 with one line, before the program runs', () => {
    const r = cli(['record', '--out', path.join(work, 'no-such-dir', 'x.tach'), '--', process.execPath, target('console.log("ran anyway");')]);
    expect(r.code).toBe(2);
    expect(r.stdout).not.toContain('ran anyway');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^profpack: ERR_TACHYON_WRITE_IO: /);
  });

  it('a command that never runs the preload still gets a valid, empty file and a warning', () => {
    const out = path.join(work, 'not-node.tach');
    const r = cli(['record', '--out', out, '--', '/bin/sh', '-c', 'exit 4']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('never started the recording');
    const src = openTachyon(out);
    expect([...src.samples()]).toHaveLength(0);
    src.close();
  });

  // The program yields every 20 ms so the harvest timer runs; it notes the
  // wall-clock time in Unix epoch µs (a recording's clock, docs/interop.md)
  // just before it kills itself.
  const killedAfter = (ms: number) =>
    [
      `const end = Date.now() + ${ms};`,
      "function tick() { profpackSpin(20); if (Date.now() < end) return setImmediate(tick); console.log(String(BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)))); process.kill(process.pid, 'SIGKILL'); }",
      'tick();',
    ].join('\n');
  const HARVEST_MS = 200;
  // A harvest may run late on a loaded machine: one interval plus this much.
  const LATE_MS = 400 * SLOWDOWN;

  function expectSurvivedUntil(file: string, killedAtUs: bigint, runMs: number): void {
    const src = openTachyon(file);
    // Every frame of the function: V8's hot lines make the leaf one frame per line.
    const spin = new Set(src.frames.flatMap((f, k) => (f.funcname === 'profpackSpin' ? [k] : [])));
    const samples = [...src.samples()];
    const last = samples.reduce((m, s) => (s.timestampUs > m ? s.timestampUs : m), 0n);
    expect(samples.filter((s) => Array.from(s.stack).some((f) => spin.has(f))).length).toBeGreaterThan(runMs / 10);
    expect(killedAtUs - last).toBeLessThan(BigInt((HARVEST_MS + LATE_MS) * 1000));
    // The program notes the time, then kills itself: samples in between are real (23 ms of them under qemu).
    expect(last).toBeLessThanOrEqual(killedAtUs + BigInt(20_000 * SLOWDOWN));
    src.close();
  }

  it('SIGKILL: the file is finalized with every harvest up to the last one', () => {
    const out = path.join(work, 'killed.tach');
    const r = cli(['record', '--harvest-ms', String(HARVEST_MS), '--out', out, '--', process.execPath, target(killedAfter(1500 * SLOWDOWN))]);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(137);
    expect(r.stderr).toContain('ended without stopping its recording (SIGKILL)');
    expectSurvivedUntil(out, BigInt(r.stdout.trim()), 1500 * SLOWDOWN);
  });

  it('startRecording() writes through a writer process: SIGKILL keeps every harvest; stop() and exit give the final file', () => {
    const recorder = JSON.stringify(path.join(build.dist, 'record', 'recorder.js'));
    const lib = (out: string, rest: string, writer = 'process') =>
      target(`const rec = require(${recorder}).startRecording({ out: ${JSON.stringify(out)}, writer: '${writer}', harvestMs: ${HARVEST_MS} });\n${rest}`);
    const killed = path.join(work, 'lib-killed.tach');
    const k = spawnSync(process.execPath, [lib(killed, killedAfter(1500 * SLOWDOWN))], { encoding: 'utf8', timeout: 60_000 * SLOWDOWN });
    expect(k.signal).toBe('SIGKILL');
    // The writer process finalizes on its own once the pipe closes.
    for (let i = 0; i < 100 && !finalized(killed); i++) spawnSync('sleep', ['0.1']);
    expectSurvivedUntil(killed, BigInt(k.stdout.trim()), 1500 * SLOWDOWN);

    // stop() returns once the file is final; process.exit() finalizes through the 'exit' handler. Both writers.
    for (const writer of ['process', 'inline']) {
      const stopped = path.join(work, `lib-stopped-${writer}.tach`);
      const body = `profpackSpin(${SPIN_MS}); const s = rec.stop(); const head = require('fs').readFileSync(s.out).subarray(0, 4).toString('latin1'); console.log(JSON.stringify({ s, head }));`;
      const r = spawnSync(process.execPath, [lib(stopped, body, writer)], { encoding: 'utf8', timeout: 60_000 * SLOWDOWN });
      expect(r.status).toBe(0);
      const { s, head } = JSON.parse(r.stdout) as { s: { samples: number }; head: string };
      expect(head).not.toBe('\0\0\0\0');
      const src = openTachyon(stopped);
      expect([...src.samples()]).toHaveLength(s.samples);
      src.close();

      const exited = path.join(work, `lib-exit-${writer}.tach`);
      const e = spawnSync(process.execPath, [lib(exited, `profpackSpin(${SPIN_MS}); process.exit(3);`, writer)], { encoding: 'utf8', timeout: 60_000 * SLOWDOWN });
      expect(e.status).toBe(3);
      const esrc = openTachyon(exited);
      expect([...esrc.samples()].length).toBeGreaterThan(50);
      esrc.close();

      // A path that cannot be created fails at start, with the writer's own code.
      const badOut = JSON.stringify(path.join(work, 'no-such-dir', 'x.tach'));
      const bad = spawnSync(process.execPath, [target(`try { require(${recorder}).startRecording({ out: ${badOut}, writer: '${writer}' }); } catch (e) { console.log(e.code); }`)], { encoding: 'utf8', timeout: 60_000 * SLOWDOWN });
      expect(bad.stdout.trim()).toBe('ERR_TACHYON_WRITE_IO');
    }
  });

  it('convert and top on a recording', () => {
    const out = path.join(work, 'workload.tach');
    for (const target of ['rec.cpuprofile', 'rec.pb.gz', 'rec.speedscope.json', 'rec.collapsed']) expect(cli(['convert', out, '-o', target]).code).toBe(0);
    const top = cli(['top', out, '--by', 'line', '--status', 'on-cpu', '-n', '5']);
    expect(top.code).toBe(0);
    expect(top.stdout.split('\n').length).toBeGreaterThanOrEqual(7);
    expect(statSync(path.join(work, 'rec.pb.gz')).size).toBeGreaterThan(0);
  });
});
