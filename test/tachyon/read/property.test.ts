// Property tests: what an independent encoder (reader-encoder.ts) writes, with
// every valid record choice, byte order, zstd framing and varint padding, the
// reader gives back exactly, sample by sample, through samples() and replay().
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProfileReader, type Frame } from '../../../lib/tachyon/read/reader';
import { choices, profileArb, type ProfileSpec } from './reader-arbitraries';
import { encodeProfile } from './reader-encoder';

function encode(spec: ProfileSpec): Uint8Array {
  return encodeProfile({ ...spec, choice: choices(spec.seed) });
}

const tinyOptions = {
  keepDecompressedLimit: 0,
  tuning: { zstdChunk: 16, events: 6, timestamps: 2, nodes: 2048, maxNodes: 20 },
};

describe('ProfileReader decodes what an independent encoder writes', () => {
  it('samples() returns every sample, in order', () => {
    fc.assert(
      fc.property(profileArb, fc.boolean(), (spec, tiny) => {
        const reader = ProfileReader.fromBuffer(encode(spec), tiny ? tinyOptions : {});
        const got = [...reader.samples()].map((s) => ({ ...s, stack: [...s.stack] }));
        expect(got).toEqual(spec.samples);
        expect(reader.info.sampleCount).toBe(BigInt(spec.samples.length));
        expect(reader.info.compressionType).toBe(spec.compression);
        expect(reader.info.startTimeUs).toBe(spec.startTimeUs);
        expect(reader.strings).toEqual(spec.strings);
        reader.close();
      }),
      { numRuns: 150 },
    );
  });

  it('replay() hands every sample to collect() with resolved frames, REPEAT runs batched', () => {
    fc.assert(
      fc.property(profileArb, fc.boolean(), (spec, tiny) => {
        const reader = ProfileReader.fromBuffer(encode(spec), tiny ? tinyOptions : {});
        const seen: {
          threadId: bigint;
          interpreterId: number;
          timestampUs: bigint;
          status: number;
          frames: readonly Frame[];
        }[] = [];
        const progress: number[] = [];
        const n = reader.replay(
          {
            collect(stackFrames, timestamps) {
              expect(stackFrames.length).toBe(1);
              expect(stackFrames[0]!.threads.length).toBe(1);
              expect(timestamps.length).toBeGreaterThan(0);
              const thread = stackFrames[0]!.threads[0]!;
              for (const ts of timestamps) {
                seen.push({
                  threadId: thread.threadId,
                  interpreterId: stackFrames[0]!.interpreterId,
                  timestampUs: ts,
                  status: thread.status,
                  frames: thread.frameInfo,
                });
              }
            },
          },
          { onProgress: (current) => progress.push(current) },
        );
        expect(n).toBe(spec.samples.length);
        expect(seen.length).toBe(spec.samples.length);
        spec.samples.forEach((s, i) => {
          const g = seen[i]!;
          expect([g.threadId, g.interpreterId, g.timestampUs, g.status]).toEqual([
            s.threadId,
            s.interpreterId,
            s.timestampUs,
            s.status,
          ]);
          expect(g.frames).toEqual(s.stack.map((f) => reader.frames[f]));
        });
        expect(progress[0]).toBe(0);
        expect(progress[progress.length - 1]).toBe(spec.samples.length);
        const stats = reader.stats!;
        expect(stats.totalSamples).toBe(spec.samples.length);
        expect(stats.repeatSamples + stats.fullRecords + stats.suffixRecords + stats.popPushRecords).toBe(
          spec.samples.length,
        );
        reader.close();
      }),
      { numRuns: 100 },
    );
  });

  it('frames come back as CPython returns them: lineno -1 drops the location, opcode 255 is null', () => {
    fc.assert(
      fc.property(profileArb, (spec) => {
        const reader = ProfileReader.fromBuffer(encode(spec));
        spec.frames.forEach((f, i) => {
          const r = reader.frames[i]!;
          expect(r.filename).toBe(spec.strings[f.filename]);
          expect(r.funcname).toBe(spec.strings[f.funcname]);
          expect(r.opcode).toBe(f.opcode === 255 ? null : f.opcode);
          if (f.lineno === -1) expect([r.lineno, r.endLineno, r.column, r.endColumn]).toEqual([null, null, null, null]);
          else {
            expect(r.lineno).toBe(f.lineno);
            expect(r.endLineno).toBe(f.endLineno === -1 ? f.lineno : f.endLineno);
            expect(r.column).toBe(f.column);
            expect(r.endColumn).toBe(f.column === -1 ? -1 : f.endColumn === -1 ? f.column : f.endColumn);
          }
        });
        reader.close();
      }),
      { numRuns: 100 },
    );
  });

  it('a truncated or corrupted file fails with a ProfpackError, never anything else', () => {
    fc.assert(
      fc.property(profileArb, fc.nat(), fc.nat(), fc.integer({ min: 0, max: 255 }), (spec, cut, at, value) => {
        const bytes = encode(spec);
        const damaged = cut % 2 ? bytes.slice(0, cut % (bytes.length + 1)) : bytes.slice();
        if (!(cut % 2) && damaged.length > 0) damaged[at % damaged.length] = value;
        try {
          const reader = ProfileReader.fromBuffer(damaged, cut % 3 ? {} : tinyOptions);
          for (const _ of reader.samples()) void _;
          reader.replay({ collect() {} });
        } catch (err) {
          expect((err as { code?: string }).code).toMatch(/^ERR_TACHYON_/);
        }
      }),
      { numRuns: 200 },
    );
  });
});
