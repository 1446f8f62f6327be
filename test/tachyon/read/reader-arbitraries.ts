// fast-check generators of whole profiles for the reader's property tests.
import fc from 'fast-check';
import type { EncodeOptions, TestFrame, TestSample } from './reader-encoder';

const U64 = (1n << 64n) - 1n;

/** A deterministic [0, 1) stream from a seed, for the encoder's choices: the tests' and benches' one RNG. */
export { rng as choices } from '../../support/rng.mjs';

const int32 = fc.oneof(
  fc.constant(-1),
  fc.integer({ min: 0, max: 5000 }),
  fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff }),
);

export type ProfileSpec = Omit<EncodeOptions, 'choice'> & { seed: number };

export const profileArb: fc.Arbitrary<ProfileSpec> = fc
  .record({
    strings: fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { minLength: 1, maxLength: 6 }),
    frameSeeds: fc.array(fc.tuple(fc.nat(), fc.nat(), int32, int32, int32, int32, fc.integer({ min: 0, max: 255 })), {
      minLength: 1,
      maxLength: 12,
    }),
    threads: fc.uniqueArray(
      fc.tuple(fc.bigInt({ min: 0n, max: U64 }), fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff_ffff }))),
      {
        minLength: 1,
        maxLength: 4,
        selector: ([t, i]) => `${t}/${i}`,
      },
    ),
    steps: fc.array(
      fc.record({
        thread: fc.nat(),
        status: fc.integer({ min: 0, max: 255 }),
        repeat: fc.boolean(),
        depth: fc.oneof(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 40 }), fc.constant(256)),
        frameSeed: fc.nat(),
        delta: fc.oneof(fc.bigInt({ min: 0n, max: 5000n }), fc.bigInt({ min: 0n, max: U64 })),
      }),
      { maxLength: 60 },
    ),
    littleEndian: fc.boolean(),
    compression: fc.constantFrom(0, 1, 1, 2),
    zstdFrames: fc.integer({ min: 1, max: 3 }),
    startTimeUs: fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.bigInt({ min: 0n, max: U64 })),
    intervalUs: fc.bigInt({ min: 0n, max: 100000n }),
    profilingConfig: fc.integer({ min: 0, max: 0x1ff }).filter((c) => (c & 7) <= 5),
    seed: fc.nat(),
  })
  .map((r) => {
    const frames: TestFrame[] = r.frameSeeds.map(([fi, fn, lineno, endLineno, column, endColumn, opcode]) => ({
      filename: fi % r.strings.length,
      funcname: fn % r.strings.length,
      lineno,
      endLineno,
      column,
      endColumn,
      opcode,
    }));
    const prev = new Map<number, { ts: bigint; stack: number[] }>();
    const samples: TestSample[] = [];
    for (const step of r.steps) {
      const t = step.thread % r.threads.length;
      const [threadId, interpreterId] = r.threads[t]!;
      const p = prev.get(t) ?? { ts: r.startTimeUs, stack: [] };
      let stack: number[];
      if (step.repeat) stack = p.stack;
      else {
        stack = [];
        let x = step.frameSeed;
        for (let k = 0; k < step.depth; k++) {
          // Mostly keep the previous stack's bottom, so SUFFIX/POP_PUSH have something to share.
          const fromPrev =
            k >= step.depth - p.stack.length && x % 3 !== 0 ? p.stack[p.stack.length - (step.depth - k)] : undefined;
          stack.push(fromPrev ?? x % frames.length);
          x = Math.floor(x / 3) + k * 7;
        }
      }
      const ts = (p.ts + step.delta) & U64;
      prev.set(t, { ts, stack });
      samples.push({ threadId, interpreterId, timestampUs: ts, status: step.status, stack });
    }
    return {
      strings: r.strings,
      frames,
      samples,
      littleEndian: r.littleEndian,
      compression: r.compression,
      zstdFrames: r.zstdFrames,
      startTimeUs: r.startTimeUs,
      intervalUs: r.intervalUs,
      profilingConfig: r.profilingConfig,
      seed: r.seed,
    };
  });
