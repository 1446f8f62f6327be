/**
 * ProfileWriter's contract beyond the bytes: write errors (ENOSPC on
 * /dev/full, a descriptor closed underneath) break the writer as CPython's
 * "Writer is broken" does and keep what was flushed; a sample that breaks a
 * format limit is refused whole, before any byte; close(), using/await using,
 * the fast path and argument checks.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, ProfpackError } from '../../../lib/errors';
import { ProfileWriter, type FrameInfo, type SampleInterpreterInfo } from '../../../lib/tachyon/write/index';
import { WRITE_BUFFER_SIZE } from '../../../lib/tachyon/format';
import { scratchDir } from '../../support/scratch-dir';
import { frameSpecOf } from '../../support/writer-profiles';

const dir = scratchDir('profpack-writer-faults-');
let n = 0;
const tmp = (tag: string) => path.join(dir, `${tag}-${n++}.bin`);

function frame(i: number): FrameInfo {
  return {
    filename: `mod${i % 7}.py`,
    funcname: `fn${i}`,
    location: { lineno: i, endLineno: i, colOffset: 0, endColOffset: 8 },
    opcode: i % 200,
  };
}

/** Sample i of a busy thread: 30 frames whose top changes every time (no REPEAT), ~50 record bytes. */
function busySample(i: number, threadId: number | bigint = 7): SampleInterpreterInfo[] {
  const frames = Array.from({ length: 30 }, (_, d) => frame(d === 0 ? 100 + (i % 50) : d));
  return [{ interpreterId: 0, threads: [{ threadId, status: 3, frameInfo: frames }] }];
}

function frameSpec(i: number) {
  return { filename: `mod${i % 7}.py`, funcname: `fn${i}`, lineno: i };
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ProfpackError);
    return (err as ProfpackError).code;
  }
  return undefined;
}

describe('write errors break the writer', () => {
  for (const compression of ['none', 'zstd'] as const) {
    it(`/dev/full (${compression}): the header write at creation fails with ENOSPC, no descriptor is left open`, () => {
      const fds = () => fs.readdirSync('/proc/self/fd').length;
      const before = fds();
      let failure: unknown;
      try {
        new ProfileWriter('/dev/full', { sampleIntervalUs: 1000, compression });
      } catch (err) {
        failure = err;
      }
      expect(failure).toBeInstanceOf(ProfpackError);
      expect((failure as ProfpackError).code).toBe(ErrorCode.TACHYON_WRITE_IO);
      expect((failure as ProfpackError).message).toMatch(/ENOSPC/);
      expect(fds()).toBe(before);
    });
  }
  // ENOSPC at a later flush (then "broken") is test/fuzz/write-faults.test.ts's
  // file-size limit case (EFBIG) and the EBADF case below.

  it('a descriptor closed underneath: EBADF, broken, and every flushed byte stays on disk', () => {
    const file = tmp('ebadf');
    const reference = tmp('reference');
    const writer = new ProfileWriter(file, { sampleIntervalUs: 1000, compression: 'none' });
    const full = new ProfileWriter(reference, { sampleIntervalUs: 1000, compression: 'none' });
    let i = 0;
    // Past the first 512 KiB flush, so there are records on disk (the 64-byte header is there from the start).
    while (i % 1000 !== 0 || fs.statSync(file).size <= 64) {
      writer.writeSample(busySample(i), 1000 + i);
      full.writeSample(busySample(i), 1000 + i);
      i++;
    }
    const onDisk = fs.statSync(file).size;
    expect(onDisk).toBeGreaterThanOrEqual(WRITE_BUFFER_SIZE - 2048);
    fs.closeSync((writer as unknown as { fd: number }).fd);
    let failure: ProfpackError | undefined;
    for (let k = 0; k < 100_000 && failure === undefined; k++, i++) {
      try {
        writer.writeSample(busySample(i), 1000 + i);
        full.writeSample(busySample(i), 1000 + i);
      } catch (err) {
        failure = err as ProfpackError;
      }
    }
    expect(failure?.code).toBe(ErrorCode.TACHYON_WRITE_IO);
    expect(failure!.message).toMatch(/EBADF/);
    expect(writer.state).toBe('broken');
    expect(codeOf(() => writer.writeSample(busySample(0), 1))).toBe(ErrorCode.TACHYON_WRITE_BROKEN);
    writer.close();
    full.finalize();
    const kept = fs.readFileSync(file);
    const ref = fs.readFileSync(reference);
    expect(kept.length).toBe(onDisk);
    // The header was never patched; the sample region is exactly the finished file's prefix.
    expect(kept.subarray(0, 64).every((b) => b === 0)).toBe(true);
    expect(Buffer.compare(kept.subarray(64), ref.subarray(64, kept.length))).toBe(0);
  });
});

describe('format limits refuse the whole sample before any byte', () => {
  const good = (_ts: number): SampleInterpreterInfo[] => [
    { interpreterId: 1, threads: [{ threadId: 10, status: 1, frameInfo: [frame(1), frame(2)] }] },
  ];
  const cases: [string, SampleInterpreterInfo[], number | bigint][] = [
    [
      'interpreter id 2^32',
      [{ interpreterId: 2 ** 32, threads: [{ threadId: 11, status: 0, frameInfo: [frame(3)] }] }],
      5000,
    ],
    [
      'thread id 2^64',
      [{ interpreterId: 0, threads: [{ threadId: 1n << 64n, status: 0, frameInfo: [frame(3)] }] }],
      5000,
    ],
    ['negative thread id', [{ interpreterId: 0, threads: [{ threadId: -1, status: 0, frameInfo: [frame(3)] }] }], 5000],
    ['negative timestamp', [{ interpreterId: 0, threads: [{ threadId: 11, status: 0, frameInfo: [frame(3)] }] }], -1],
    [
      'timestamp 2^64',
      [{ interpreterId: 0, threads: [{ threadId: 11, status: 0, frameInfo: [frame(3)] }] }],
      1n << 64n,
    ],
  ];
  for (const [name, bad, ts] of cases) {
    it(`${name}: ERR_TACHYON_WRITE_LIMIT, nothing written, writer still usable`, () => {
      const a = tmp('limit');
      const b = tmp('nolimit');
      const refused = new ProfileWriter(a, { sampleIntervalUs: 1000, compression: 'none' });
      const clean = new ProfileWriter(b, { sampleIntervalUs: 1000, compression: 'none' });
      refused.writeSample(good(1000), 1000);
      clean.writeSample(good(1000), 1000);
      // A good thread first, then the bad one, in one call: neither is written.
      const mixed: SampleInterpreterInfo[] = [
        { interpreterId: 3, threads: [{ threadId: 99, status: 2, frameInfo: [frame(40), frame(41)] }] },
        ...bad,
      ];
      expect(codeOf(() => refused.writeSample(mixed, ts))).toBe(ErrorCode.TACHYON_WRITE_LIMIT);
      expect(refused.state).toBe('open');
      refused.writeSample(good(2000), 2000);
      clean.writeSample(good(2000), 2000);
      refused.finalize();
      clean.finalize();
      expect(Buffer.compare(fs.readFileSync(a), fs.readFileSync(b))).toBe(0);
    });
  }

  it('a frame that cannot be encoded (lone surrogate) refuses the sample and interns nothing', () => {
    const a = tmp('surrogate');
    const b = tmp('nosurrogate');
    const refused = new ProfileWriter(a, { sampleIntervalUs: 1000, compression: 'zstd' });
    const clean = new ProfileWriter(b, { sampleIntervalUs: 1000, compression: 'zstd' });
    const bad: SampleInterpreterInfo[] = [
      {
        interpreterId: 0,
        threads: [
          {
            threadId: 1,
            status: 0,
            frameInfo: [frame(60), { filename: 'ok.py', funcname: 'bad\ud800', location: null }],
          },
        ],
      },
    ];
    expect(codeOf(() => refused.writeSample(bad, 10))).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(refused.stringCount).toBe(0);
    expect(refused.frameCount).toBe(0);
    refused.writeSample(busySample(1), 20);
    clean.writeSample(busySample(1), 20);
    refused.finalize();
    clean.finalize();
    expect(Buffer.compare(fs.readFileSync(a), fs.readFileSync(b))).toBe(0);
  });

  it('writeStack refuses ids internFrame never returned', () => {
    const w = new ProfileWriter(tmp('ids'), { sampleIntervalUs: 1000 });
    const f = w.internFrame({ filename: 'a.py', funcname: 'f', lineno: 1 });
    expect(codeOf(() => w.writeStack(1, 0, 10, 0, new Uint32Array([f, f + 1])))).toBe(
      ErrorCode.TACHYON_WRITE_UNKNOWN_ID,
    );
    expect(codeOf(() => w.writeStack(1, 0, 10, 0, [0.5]))).toBe(ErrorCode.TACHYON_WRITE_UNKNOWN_ID);
    expect(codeOf(() => w.internFrame({ filename: 'b.py', funcname: 42 }))).toBe(ErrorCode.TACHYON_WRITE_UNKNOWN_ID);
    expect(w.stringCount).toBe(2); // 'b.py' was rolled back
    expect(w.stats.totalSamples).toBe(0);
    w.close();
  });

  it('a stack refused for its ids leaves no bytes behind and the writer open, between accepted ones', () => {
    const a = tmp('refused-ids');
    const b = tmp('clean-ids');
    const refused = new ProfileWriter(a, { sampleIntervalUs: 1000, compression: 'none' });
    const clean = new ProfileWriter(b, { sampleIntervalUs: 1000, compression: 'none' });
    for (const w of [refused, clean]) for (let i = 0; i < 4; i++) w.internFrame(frameSpec(i));
    const bad: (Uint32Array | number[])[] = [
      new Uint32Array([0, 1, 2, 4]), // the last of a staged-size stack
      [3, 2, -1],
      [1, 2.5],
      [0, Number.NaN],
    ];
    for (let i = 0; i < 40; i++) {
      const good = new Uint32Array([i % 4, (i + 1) % 4, 3]);
      for (const w of [refused, clean]) w.writeStack(1 + (i % 3), 0, 10 * i, 0, good);
      const ids = bad[i % bad.length]!;
      const at = ids.findIndex((id) => !(id >= 0 && id < 4 && Number.isInteger(id)));
      expect(() => refused.writeStack(9, 0, 10 * i + 5, 0, ids)).toThrow(`frame id ${ids[at]} at index ${at} was`);
      expect(refused.state).toBe('open');
    }
    refused.finalize();
    clean.finalize();
    expect(Buffer.compare(fs.readFileSync(a), fs.readFileSync(b))).toBe(0);
  });
});

describe('API', () => {
  it('the fast path writes the same bytes as writeSample', () => {
    const a = tmp('fast');
    const b = tmp('slow');
    const fast = new ProfileWriter(a, {
      sampleIntervalUs: 1000,
      startTimeUs: 77n,
      compression: 'zstd',
      mode: 'cpu',
      captureFeatures: 8,
    });
    const slow = new ProfileWriter(b, {
      sampleIntervalUs: 1000,
      startTimeUs: 77,
      compression: 'zstd',
      mode: 1,
      captureFeatures: 8,
    });
    const pool = Array.from({ length: 40 }, (_, i) => frame(i));
    const ids = pool.map((f) => fast.internFrame(frameSpecOf(f, fast.internString(f.filename))));
    for (let i = 0; i < 3000; i++) {
      const depth = 300 - (i % 40) * 7; // also beyond 256: the outermost are dropped
      const stack = Array.from({ length: depth }, (_, d) => (d + (i % 3 === 0 ? 0 : i)) % 40);
      const ts = 1000 * i + (i % 5 === 0 ? -3000 : 0) + 5000;
      fast.writeStack(5n + BigInt(i % 4), i % 2, BigInt(ts), i & 0xff, new Uint32Array(stack.map((k) => ids[k]!)));
      slow.writeSample(
        [
          {
            interpreterId: i % 2,
            threads: [{ threadId: 5 + (i % 4), status: i & 0xff, frameInfo: stack.map((k) => pool[k]!) }],
          },
        ],
        ts,
      );
    }
    expect(fast.stats).toEqual(slow.stats);
    fast.setStats(3, 1000, 0.5, 2);
    slow.setStats(3, 1000, 0.5, 2);
    fast.finalize();
    slow.finalize();
    expect(Buffer.compare(fs.readFileSync(a), fs.readFileSync(b))).toBe(0);
  });

  it('writeStacks (one tick per call) writes the same bytes as writeStack per thread', () => {
    const files = [tmp('tick-big'), tmp('tick-f64'), tmp('per-thread')];
    const writers = files.map((f) => new ProfileWriter(f, { sampleIntervalUs: 1000, compression: 'zstd' }));
    const ids = writers.map((w) =>
      Array.from({ length: 50 }, (_, i) =>
        w.internFrame({ filename: `m${i % 4}.py`, funcname: `f${i}`, lineno: i, opcode: i }),
      ),
    );
    expect(ids[0]).toEqual(ids[2]);
    const tids = [1n, 2n ** 64n - 1n, 77n, 1n << 40n, 5n];
    for (let tick = 0; tick < 400; tick++) {
      const stacks = tids.map((_, k) => {
        const depth = (tick + k) % 13 === 0 ? 300 : 20 + ((tick * (k + 1)) % 7 === 0 ? tick % 5 : 0);
        return Uint32Array.from({ length: depth }, (_, d) => (d === 0 ? (tick + k) % 50 : (d * 3 + k) % 50));
      });
      const ends = new Uint32Array(stacks.length);
      let total = 0;
      stacks.forEach((st, k) => (ends[k] = total += st.length));
      const all = new Uint32Array(total);
      stacks.forEach((st, k) => all.set(st, ends[k]! - st.length));
      const statuses = tids.map((_, k) => (tick * 7 + k) % 300);
      const ts = 10_000 + tick * 1000 - (tick % 9 === 0 ? 5000 : 0);
      writers[0]!.writeStacks(BigInt(ts), {
        threadIds: BigUint64Array.from(tids),
        interpreterIds: [0, 1, 0, 2, 0],
        statuses: Uint8Array.from(statuses, (v) => v & 0xff),
        stackEnds: ends,
        frameIds: all,
      });
      // Float64Array cannot hold 2^64-1: that thread goes through a plain array of bigints there.
      writers[1]!.writeStacks(ts, {
        threadIds: [1, 2n ** 64n - 1n, 77, 2 ** 40, 5],
        interpreterIds: Uint32Array.from([0, 1, 0, 2, 0]),
        statuses,
        stackEnds: ends,
        frameIds: all,
      });
      tids.forEach((tid, k) => writers[2]!.writeStack(tid, [0, 1, 0, 2, 0][k]!, ts, statuses[k]!, stacks[k]!));
    }
    const stats = writers.map((w) => w.stats);
    expect(stats[0]).toEqual(stats[2]);
    expect(stats[1]).toEqual(stats[2]);
    expect(stats[2]!.popPushRecords + stats[2]!.suffixRecords).toBeGreaterThan(0);
    writers.forEach((w) => w.finalize());
    const bytes = files.map((f) => fs.readFileSync(f));
    expect(Buffer.compare(bytes[0]!, bytes[2]!)).toBe(0);
    expect(Buffer.compare(bytes[1]!, bytes[2]!)).toBe(0);
  });

  it('writeStacks refuses a bad tick whole', () => {
    const a = tmp('badtick');
    const b = tmp('goodtick');
    const bad = new ProfileWriter(a, { sampleIntervalUs: 1000, compression: 'none' });
    const good = new ProfileWriter(b, { sampleIntervalUs: 1000, compression: 'none' });
    for (const w of [bad, good]) w.internFrame({ filename: 'a.py', funcname: 'f' });
    const tick = (frameIds: number[], ends: number[]) => ({
      threadIds: [1, 2],
      interpreterIds: 0,
      statuses: [0, 0],
      stackEnds: Uint32Array.from(ends),
      frameIds: Uint32Array.from(frameIds),
    });
    expect(codeOf(() => bad.writeStacks(5, tick([0, 0, 1], [1, 3])))).toBe(ErrorCode.TACHYON_WRITE_UNKNOWN_ID);
    expect(codeOf(() => bad.writeStacks(5, tick([0, 0], [2, 1])))).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => bad.writeStacks(5, tick([0, 0], [1, 3])))).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => bad.writeStacks(5, { ...tick([0], [1, 1]), threadIds: [1] }))).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => bad.writeStacks(5, { ...tick([0], [1, 1]), interpreterIds: [0, 2 ** 32] }))).toBe(
      ErrorCode.TACHYON_WRITE_LIMIT,
    );
    for (const w of [bad, good]) {
      w.writeStacks(6, tick([0, 0], [1, 2]));
      w.finalize();
    }
    expect(Buffer.compare(fs.readFileSync(a), fs.readFileSync(b))).toBe(0);
  });

  it('frame objects mutated between samples are re-interned (values are compared, not identity)', () => {
    const a = tmp('mutated');
    const b = tmp('fresh');
    const reused = new ProfileWriter(a, { sampleIntervalUs: 1000, compression: 'none' });
    const fresh = new ProfileWriter(b, { sampleIntervalUs: 1000, compression: 'none' });
    const stack: FrameInfo[] = Array.from({ length: 10 }, (_, i) => frame(i));
    for (let i = 0; i < 200; i++) {
      const f = stack[i % 10]! as { location: { lineno: number } | null; opcode: number | null; filename: string };
      if (i % 3 === 0) f.location!.lineno = i; // same object, new line
      if (i % 7 === 0) f.opcode = i % 2 ? null : 9;
      if (i % 11 === 0) f.filename = `moved${i}.py`;
      reused.writeSample([{ interpreterId: 0, threads: [{ threadId: 1, status: 0, frameInfo: stack }] }], 1000 * i);
      fresh.writeSample(
        [{ interpreterId: 0, threads: [{ threadId: 1, status: 0, frameInfo: structuredClone(stack) }] }],
        1000 * i,
      );
    }
    reused.finalize();
    fresh.finalize();
    expect(Buffer.compare(fs.readFileSync(a), fs.readFileSync(b))).toBe(0);
  });

  it('frame objects seen before at other depths and threads: mutated ones, refused samples, past the memo', () => {
    // Oracle: the same samples as fresh clones every time (never an object seen before: every frame interned by value).
    const files = [tmp('moved'), tmp('moved-cloned')];
    const writers = files.map((f) => new ProfileWriter(f, { sampleIntervalUs: 1000, compression: 'none' }));
    type Loose = { filename: unknown; funcname: string; location: unknown; opcode: unknown };
    const pool = Array.from({ length: 30 }, (_, i) => frame(i) as Loose);
    let x = 12345;
    const rnd = (n: number) => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      return x % n;
    };
    const write = (i: number, sample: SampleInterpreterInfo[]) => {
      const codes = [sample, structuredClone(sample)].map((s, k) => codeOf(() => writers[k]!.writeSample(s, 1000 * i)));
      expect(codes[0]).toBe(codes[1]);
      return codes[0];
    };
    let refused = 0;
    for (let i = 0; i < 600; i++) {
      const f = pool[rnd(30)]!;
      if (i % 3 === 0) (f.location as { lineno: number } | null) = { ...frame(rnd(9)).location!, lineno: i };
      if (i % 17 === 0) f.location = i % 2 ? null : [i, i, 1, 2];
      if (i % 7 === 0) f.opcode = i % 2 ? null : 9;
      if (i % 11 === 0) f.filename = `moved${i % 4}.py`;
      const threads = [1, 2, 3].map((t) => ({
        threadId: t,
        status: 0,
        frameInfo: Array.from({ length: 3 + rnd(8) }, () => pool[rnd(30)]! as FrameInfo),
      }));
      if (i % 13 === 0) {
        // Refused in its last thread, after the new frame objects of the first ones were interned (and rolled back).
        const fresh = Array.from({ length: 4 }, (_, k) => frame(1000 + i * 4 + k) as Loose);
        threads[0]!.frameInfo.unshift(...(fresh as FrameInfo[]));
        pool.splice(0, 4, ...fresh); // they come back in the next samples
        threads[2]!.frameInfo.push({ ...frame(1), filename: 42 } as unknown as FrameInfo);
        if (write(i, [{ interpreterId: 0, threads }]) !== undefined) refused++;
        continue;
      }
      expect(write(i, [{ interpreterId: 0, threads }])).toBeUndefined();
    }
    expect(refused).toBe(47);
    // More frame objects than the memo holds (it starts over), then the first of them again, one of them changed.
    const many = Array.from({ length: 34_000 }, (_, i) => frame(2000 + i) as Loose);
    for (let i = 0; i < many.length; i += 250) {
      write(600 + i, [
        { interpreterId: 0, threads: [{ threadId: 1, status: 0, frameInfo: many.slice(i, i + 250) as FrameInfo[] }] },
      ]);
    }
    many[3]!.funcname = 'renamed';
    write(1e6, [
      { interpreterId: 0, threads: [{ threadId: 1, status: 0, frameInfo: many.slice(0, 250) as FrameInfo[] }] },
    ]);
    expect(writers[0]!.stats).toEqual(writers[1]!.stats);
    for (const w of writers) w.finalize();
    expect(Buffer.compare(fs.readFileSync(files[0]!), fs.readFileSync(files[1]!))).toBe(0);
  });

  it('frozen frames are compared by identity, and only frames that cannot change', () => {
    // Oracle: the same samples as fresh clones every time (never the same object, so every frame is compared by value).
    const files = [tmp('frozen'), tmp('cloned')];
    const writers = files.map((f) => new ProfileWriter(f, { sampleIntervalUs: 1000, compression: 'none' }));
    let line = 1;
    const getterFrame = Object.freeze(
      Object.defineProperty({ ...frame(90) }, 'funcname', { get: () => `moving${line % 4}`, enumerable: true }),
    );
    const looseLocation = { lineno: 5, endLineno: 5, colOffset: 0, endColOffset: 3 };
    const looseLocationFrame = Object.freeze({ ...frame(91), location: looseLocation });
    const arrayFrame = Object.freeze({ ...frame(92), location: Object.freeze([7, 7, 1, 2]) });
    const pool = Array.from({ length: 40 }, (_, i) =>
      Object.freeze({ ...frame(i), location: Object.freeze({ ...frame(i).location! }) }),
    );
    const bottom = [getterFrame, looseLocationFrame, arrayFrame] as FrameInfo[];
    for (let i = 0; i < 400; i++) {
      line = i;
      looseLocation.lineno = 5 + (i % 3); // the frame is frozen, its location is not
      const top = [pool[i % 40]!, pool[(i * 7) % 40]!].slice(0, 1 + (i % 2));
      const stack = i % 5 === 0 ? [...top, ...bottom] : [...bottom.slice(0, 1 + (i % 3)), ...top, ...bottom];
      const sample = [{ interpreterId: 0, threads: [{ threadId: 1, status: 0, frameInfo: stack }] }];
      writers[0]!.writeSample(sample, 1000 * i);
      writers[1]!.writeSample(structuredClone(sample), 1000 * i);
    }
    expect(writers[0]!.stats).toEqual(writers[1]!.stats);
    for (const w of writers) w.finalize();
    expect(Buffer.compare(fs.readFileSync(files[0]!), fs.readFileSync(files[1]!))).toBe(0);
  });

  it("each thread's frameInfo is read once: the array checked is the array interned", () => {
    // A getter answering another array on each read; the oracle gets, as plain data, the array the getter answered.
    const files = [tmp('getter'), tmp('answered')];
    const writers = files.map((f) => new ProfileWriter(f, { sampleIntervalUs: 1000, compression: 'none' }));
    const pool = Array.from({ length: 20 }, (_, i) => frame(i));
    const stacks = [pool.slice(0, 3), pool.slice(5, 15), [], pool.slice(2, 9).reverse()];
    let reads = 0;
    for (let i = 0; i < 60; i++) {
      const answered: FrameInfo[][] = [];
      const thread = (t: number) =>
        Object.defineProperty({ threadId: t, status: i & 3 }, 'frameInfo', {
          get: () => {
            reads++;
            const a = stacks[(i + t + reads) % stacks.length]!;
            answered.push(a);
            return a;
          },
          enumerable: true,
        }) as { threadId: number; status: number; frameInfo: FrameInfo[] };
      const sample = [{ interpreterId: 0, threads: [thread(1), thread(2)] }];
      writers[0]!.writeSample(sample, 1000 * i);
      expect(answered.length).toBe(2);
      writers[1]!.writeSample(
        [
          {
            interpreterId: 0,
            threads: answered.map((frameInfo, k) => ({ threadId: k + 1, status: i & 3, frameInfo })),
          },
        ],
        1000 * i,
      );
    }
    expect(reads).toBe(120);
    expect(writers[0]!.stats).toEqual(writers[1]!.stats);
    for (const w of writers) w.finalize();
    expect(Buffer.compare(fs.readFileSync(files[0]!), fs.readFileSync(files[1]!))).toBe(0);
  });

  it('immutableFrames (identity shortcut) writes the same bytes as value comparison', () => {
    const files = [tmp('immutable'), tmp('values')];
    const writers = [
      new ProfileWriter(files[0]!, { sampleIntervalUs: 1000, compression: 'zstd', immutableFrames: true }),
      new ProfileWriter(files[1]!, { sampleIntervalUs: 1000, compression: 'zstd' }),
    ];
    const pool = Array.from({ length: 64 }, (_, i) => frame(i));
    const stacks = [0, 1, 2].map(() => [] as FrameInfo[]);
    for (let i = 0; i < 3000; i++) {
      const t = i % 3;
      const st = stacks[t]!;
      if (i % 4 === 0) st.splice(0, i % 3); // pop from the top (innermost first)
      if (i % 5 === 0 || st.length === 0) st.unshift(pool[(i * 7) % 64]!, pool[i % 64]!);
      if (i % 97 === 0) st.unshift(structuredClone(pool[i % 64]!)); // equal values, another object
      for (const w of writers)
        w.writeSample(
          [{ interpreterId: 0, threads: [{ threadId: t, status: i & 3, frameInfo: st.slice(0, 300) }] }],
          1000 * i,
        );
    }
    expect(writers[0]!.stats).toEqual(writers[1]!.stats);
    for (const w of writers) w.finalize();
    expect(Buffer.compare(fs.readFileSync(files[0]!), fs.readFileSync(files[1]!))).toBe(0);
  });

  it('frames are deduplicated on all 7 converted fields, strings by equality', () => {
    const w = new ProfileWriter(tmp('dedup'), { sampleIntervalUs: 1 });
    const a = w.internFrame({ filename: 'f.py', funcname: 'g', lineno: 10, endLineno: -1, column: 4, endColumn: -1 });
    const b = w.internFrame({ filename: 'f.py', funcname: 'g', lineno: 10, endLineno: 10, column: 4, endColumn: 4 });
    const c = w.internFrame({
      filename: 'f.py',
      funcname: 'g',
      lineno: 2 ** 32 + 10,
      endLineno: -1,
      column: 4,
      endColumn: -1,
      opcode: 300,
    });
    const d = w.internFrame({
      filename: 'f.py',
      funcname: 'g',
      lineno: 10n,
      endLineno: null,
      column: 4.5,
      endColumn: -1,
      opcode: 255,
    });
    expect(a).not.toBe(b); // CPython keys on the raw tuple: -1 and 10 differ though they encode alike
    expect(c).toBe(a); // lineno cut to int32, opcode 300 -> none
    expect(d).not.toBe(a); // column 4.5 is not an int -> -1
    expect(w.internString('f.py')).toBe(0);
    expect(w.stringCount).toBe(2);
    expect(w.frameCount).toBe(3);
    w.close();
  });

  it('close() without finalize leaves the 64 zero header bytes (as CPython), and the writer refuses further calls', () => {
    const file = tmp('closed');
    const w = new ProfileWriter(file, { sampleIntervalUs: 1000 });
    w.writeSample(busySample(0), 10);
    w.close();
    w.close();
    expect(w.state).toBe('closed');
    const bytes = fs.readFileSync(file);
    expect(bytes.length).toBe(64);
    expect(bytes.every((b) => b === 0)).toBe(true);
    expect(codeOf(() => w.writeSample(busySample(1), 20))).toBe(ErrorCode.TACHYON_WRITE_CLOSED);
    expect(codeOf(() => w.finalize())).toBe(ErrorCode.TACHYON_WRITE_CLOSED);
  });

  it('using finalizes; await using finalizes; a finalized writer refuses samples', async () => {
    const a = tmp('using');
    {
      using w = new ProfileWriter(a, { sampleIntervalUs: 1000, compression: 'none' });
      w.writeSample(busySample(0), 10);
    }
    const b = tmp('await-using');
    {
      await using w = new ProfileWriter(b, { sampleIntervalUs: 1000, compression: 'none' });
      w.writeSample(busySample(0), 10);
    }
    const c = tmp('explicit');
    const w = new ProfileWriter(c, { sampleIntervalUs: 1000, compression: 'none' });
    w.writeSample(busySample(0), 10);
    const stats = w.finalize();
    expect(stats.totalSamples).toBe(1);
    expect(stats.fullRecords).toBe(1);
    expect(w.stats).toEqual(stats);
    expect(codeOf(() => w.writeSample(busySample(1), 20))).toBe(ErrorCode.TACHYON_WRITE_CLOSED);
    w[Symbol.dispose](); // after finalize: nothing to do
    expect(Buffer.compare(fs.readFileSync(a), fs.readFileSync(c))).toBe(0);
    expect(Buffer.compare(fs.readFileSync(b), fs.readFileSync(c))).toBe(0);
  });

  it('checks its arguments as CPython does', () => {
    const ok = { sampleIntervalUs: 1000 };
    expect(codeOf(() => new ProfileWriter(tmp('x'), { ...ok, mode: 5 }))).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => new ProfileWriter(tmp('x'), { ...ok, captureFeatures: 32 }))).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => new ProfileWriter(tmp('x'), { ...ok, compression: 'gzip' as 'zstd' }))).toBe(
      ErrorCode.INVALID_ARGUMENT,
    );
    expect(codeOf(() => new ProfileWriter(tmp('x'), { sampleIntervalUs: -1 }))).toBe(ErrorCode.TACHYON_WRITE_LIMIT);
    expect(codeOf(() => new ProfileWriter(path.join(dir, 'no', 'such', 'dir.bin'), ok))).toBe(
      ErrorCode.TACHYON_WRITE_IO,
    );
    const w = new ProfileWriter(tmp('stats'), ok);
    expect(codeOf(() => w.setStats(-1, 10))).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => w.setStats(1, Number.NaN))).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => w.setStats(1, 10, Number.POSITIVE_INFINITY))).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => w.setStats(1, 10, 0, Number.NaN))).toBe(ErrorCode.INVALID_ARGUMENT);
    w.setStats(1, 10, 0, -5); // missed samples may be negative
    expect(
      codeOf(() =>
        w.writeSample(
          [{ interpreterId: 0, threads: [{ threadId: 1, status: 'x' as unknown as number, frameInfo: [] }] }],
          1,
        ),
      ),
    ).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(
      codeOf(() => w.writeSample([{ interpreterId: 0, threads: [{ threadId: 1.5, status: 0, frameInfo: [] }] }], 1)),
    ).toBe(ErrorCode.INVALID_ARGUMENT);
    w.writeSample([], 5); // no interpreters: nothing written, nothing counted
    w.writeSample([{ interpreterId: 0, threads: [] }], 5);
    expect(w.stats.totalSamples).toBe(0);
    w.close();
  });
});
