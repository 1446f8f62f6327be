/**
 * zstd without zstd-napi (lib/tachyon/file/zstd/binding.ts): Node's built-in zstd
 * where this Node has it, fzstd otherwise. Every compressed shared vector
 * reads the same through each fallback as through zstd-napi; what Node's zstd
 * writes reads back through every decoder; without it, writing zstd fails
 * with one coded error and compression: 'none' still writes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { fallbackZstd, nodeZstd, type FallbackDecoder, type ZstdApi } from '../../../../lib/tachyon/file/zstd/fallback';
import { sharedPath } from '../../../support/environment';
import { cpythonInterpreter } from '../../../support/cpython.mjs';

/** Counts the samples CPython 3.15's own reader replays from argv[1]. */
const CPYTHON_COUNT = `
import sys, _remote_debugging
class Count:
    n = 0
    def collect(self, stack_frames, timestamps_us=None):
        Count.n += len(timestamps_us) if timestamps_us else 1
_remote_debugging.BinaryReader(sys.argv[1]).replay(Count())
print(Count.n)
`;

const dir = sharedPath('vectors', 'tachyon');
const zstdVectors = readdirSync(dir)
  .filter((f) => f.endsWith('_zstd.bin') || /^e1[56]_zstd/.test(f))
  .sort();
const decoders: FallbackDecoder[] = nodeZstd() ? ['node', 'fzstd'] : ['fzstd'];
const originalEnv = process.env.PROFPACK_ZSTD;

/** The library loaded afresh with PROFPACK_ZSTD=provider (the choice is made once per load). */
async function libraryWith(provider: string) {
  process.env.PROFPACK_ZSTD = provider;
  vi.resetModules();
  const dump = await import('../../../../lib/tachyon/read/dump');
  const binding = await import('../../../../lib/tachyon/file/zstd/binding');
  const writer = await import('../../../../lib/tachyon/write/index');
  const { backend } = await import('../../../../lib/backend');
  return { ...dump, ...binding, ...writer, backend };
}

afterAll(() => {
  if (originalEnv === undefined) delete process.env.PROFPACK_ZSTD;
  else process.env.PROFPACK_ZSTD = originalEnv;
  vi.resetModules();
});

/** Decompresses through the DCtx contract with small input and output steps. */
function streamDecode(
  api: ZstdApi,
  data: Uint8Array,
  inStep: number,
  outStep: number,
): { bytes: Uint8Array; hint: number } {
  const dctx = new api.DCtx();
  const parts: number[] = [];
  const out = new Uint8Array(outStep);
  let pos = 0;
  let hint: number;
  for (;;) {
    const input = data.subarray(pos, Math.min(data.length, pos + inStep));
    const [h, produced, consumed] = dctx.decompressStream(out, input);
    hint = h;
    for (let i = 0; i < produced; i++) parts.push(out[i]!);
    pos += consumed;
    if (pos >= data.length && produced < out.length) break;
  }
  return { bytes: Uint8Array.from(parts), hint };
}

describe('zstd fallbacks', () => {
  it('finds the compressed vectors', () => {
    expect(zstdVectors.length).toBeGreaterThanOrEqual(20);
  });

  for (const decoder of decoders) {
    it(`${decoder}: every compressed vector reads as through zstd-napi (stage, info, samples, error code)`, async () => {
      const napi = await libraryWith('napi');
      const want = zstdVectors.map((f) => napi.dumpProfile(`${dir}/${f}`));
      const lib = await libraryWith(decoder);
      expect(lib.zstdProvider()).toBe(decoder);
      // The one choice, as the backend reports it.
      expect(lib.backend.zstd).toBe(decoder);
      zstdVectors.forEach((f, i) => {
        const got = lib.dumpProfile(readFileSync(`${dir}/${f}`), { keepDecompressedLimit: 0 });
        const expected = want[i]!;
        expect({ f, accepted: got.accepted, stage: got.stage, info: got.info }).toEqual({
          f,
          accepted: expected.accepted,
          stage: expected.stage,
          info: expected.info,
        });
        expect(got.samples).toEqual(expected.samples);
        // zstd-napi's error texts are libzstd's; a fallback's differ, its code does not.
        expect(got.error?.code).toBe(expected.error?.code);
      });
    });

    it(`${decoder}: frames cut anywhere, concatenated frames and a truncated end`, () => {
      const api = fallbackZstd(decoder);
      // The sample region: from the 64-byte header to the string table (offset at 40, little-endian here).
      const file = readFileSync(`${dir}/s20_random_mix_zstd.bin`);
      const region = file.subarray(64, Number(file.readBigUInt64LE(40)));
      const whole = streamDecode(api, region, region.length, 1 << 20);
      expect(whole.hint).toBe(0);
      expect(whole.bytes.length).toBeGreaterThan(region.length);
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 4096 }), fc.integer({ min: 1, max: 4096 }), (inStep, outStep) => {
          const got = streamDecode(api, region, inStep, outStep);
          expect(got.hint).toBe(0);
          expect(Buffer.from(got.bytes).equals(Buffer.from(whole.bytes))).toBe(true);
        }),
        { numRuns: 25 },
      );
      const twice = streamDecode(api, Buffer.concat([region, region]), 1000, 777);
      expect(Buffer.from(twice.bytes).equals(Buffer.concat([whole.bytes, whole.bytes]))).toBe(true);
      expect(streamDecode(api, region.subarray(0, region.length - 5), 1000, 777).hint).not.toBe(0);
      expect(() => streamDecode(api, Uint8Array.from([1, 2, 3, 4, 5, 6]), 100, 100)).toThrow(
        /Unknown frame descriptor/,
      );
      expect(api.getFrameContentSize(region)).toBeNull();
      expect(() => api.getFrameContentSize(region.subarray(0, 3))).toThrow();
    });
  }

  if (nodeZstd()) {
    it("Node's zstd writes frames every decoder reads, with no content size (as CPython's)", () => {
      const writer = fallbackZstd('node');
      fc.assert(
        fc.property(
          fc.array(fc.uint8Array({ maxLength: 3000 }), { maxLength: 6 }),
          fc.integer({ min: 1, max: 300 }),
          (chunks, outSize) => {
            const cctx = new writer.CCtx();
            cctx.setParameter(writer.CParameter.compressionLevel, 5);
            const out = new Uint8Array(outSize);
            const written: Uint8Array[] = [];
            chunks.forEach((chunk, i) => {
              const directive = i % 2 === 0 ? writer.EndDirective.continue : writer.EndDirective.flush;
              let rest = chunk;
              for (;;) {
                const [remaining, produced, consumed] = cctx.compressStream2(out, rest, directive);
                written.push(out.slice(0, produced));
                rest = rest.subarray(consumed);
                if (rest.length === 0 && remaining === 0) break;
              }
            });
            for (;;) {
              const [remaining, produced] = cctx.compressStream2(out, new Uint8Array(0), writer.EndDirective.end);
              written.push(out.slice(0, produced));
              if (remaining === 0) break;
            }
            const stream = Buffer.concat(written);
            expect(writer.getFrameContentSize(stream)).toBeNull();
            for (const decoder of decoders) {
              const got = streamDecode(fallbackZstd(decoder), stream, 999, 512);
              expect(got.hint).toBe(0);
              expect(Buffer.from(got.bytes).equals(Buffer.concat(chunks))).toBe(true);
            }
          },
        ),
        { numRuns: 40 },
      );
    });

    it("the Tachyon writer on Node's zstd writes files profpack and CPython 3.15 read back", async () => {
      const lib = await libraryWith('node');
      const work = mkdtempSync(path.join(tmpdir(), 'profpack-zstd-node-'));
      try {
        const file = path.join(work, 'out.tach');
        const w = new lib.ProfileWriter(file, { sampleIntervalUs: 1000 });
        for (let i = 0; i < 500; i++)
          w.writeStack(7, 0, i * 1000, 0, [w.internFrame({ filename: 'a.py', funcname: `f${i % 9}`, lineno: i % 40 })]);
        w.finalize();
        const dump = lib.dumpProfile(file);
        expect(dump.accepted).toBe(true);
        expect(dump.info?.compression_type).toBe(1);
        expect(dump.samples.length).toBe(500);
        const counted = execFileSync(cpythonInterpreter(), ['-c', CPYTHON_COUNT, file], { encoding: 'utf8' });
        expect(counted.trim()).toBe('500');
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    });
  } else {
    it('without zstd-napi and Node >= 22.15, an explicit zstd fails, coded; the default and none write', async () => {
      const lib = await libraryWith('fzstd');
      const work = mkdtempSync(path.join(tmpdir(), 'profpack-zstd-none-'));
      try {
        const explicit = path.join(work, 'z.tach');
        expect(() => new lib.ProfileWriter(explicit, { sampleIntervalUs: 1000, compression: 'zstd' })).toThrow(
          expect.objectContaining({
            code: 'ERR_NATIVE_UNAVAILABLE',
            message: expect.stringMatching(/Node >= 22\.15.*compression: 'none'/),
          }),
        );
        expect(existsSync(explicit)).toBe(false);
        for (const compression of [undefined, 'none'] as const) {
          const file = path.join(work, `n-${String(compression)}.tach`);
          const w = new lib.ProfileWriter(file, { sampleIntervalUs: 1000, compression });
          w.writeStack(7, 0, 1000, 0, [w.internFrame({ filename: 'a.py', funcname: 'f', lineno: 1 })]);
          w.finalize();
          // The header's compression type (bytes 56..59 in CPython's layout): 0, none.
          expect(readFileSync(file).readUInt32LE(56)).toBe(0);
          expect(lib.dumpProfile(file).samples.length).toBe(1);
        }
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    });
  }

  it('PROFPACK_ZSTD names a provider or fails with a coded error', async () => {
    const lib = await libraryWith('brotli');
    expect(() => lib.zstdProvider()).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
    expect(() => lib.backend.zstd).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
    // Printing the backend neither chooses zstd nor throws.
    expect(Object.keys(lib.backend)).not.toContain('zstd');
    expect(JSON.stringify(lib.backend)).toContain('"name"');
    const auto = await libraryWith('');
    expect(['napi', 'node', 'fzstd']).toContain(auto.zstdProvider());
    expect(auto.backend.zstd).toBe(auto.zstdProvider());
  });
});
