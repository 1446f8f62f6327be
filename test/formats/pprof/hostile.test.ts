// Hostile and damaged pprof input: every refusal is a ProfpackError with a
// code, the byte offset and what was expected; nothing crashes, hangs or
// grows with a count the file claims. A gzip of 30 M empty samples is
// refused at its first sample; 3 M valid samples stream in bounded memory.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, isProfpackError } from '../../../lib/errors';
import { detectPprof, pprofAdapter, readPprof } from '../../../lib/formats/pprof/index';
import { detectFormat } from '../../../lib/formats/registry';
import { thrown } from '../../support/refusals';
import { outsideDir } from './support';

/** Reads every batch, as a query would. */
function drain(bytes: Uint8Array, options = {}): number {
  const source = readPprof(bytes, options);
  let n = 0;
  for (const b of source.batches()) n += b.length;
  return n;
}

/** string table "", "s", "c"; sample_type s/c. */
const HEADER = [0x32, 0x00, 0x32, 0x01, 0x73, 0x32, 0x01, 0x63, 0x0a, 0x04, 0x08, 0x01, 0x10, 0x02];

/** `count` copies of one sample message (bytes) after HEADER. */
function repeated(sample: number[], count: number, header = HEADER): Buffer {
  const out = Buffer.alloc(header.length + sample.length * count);
  out.set(header, 0);
  out.set(sample, header.length);
  // Doubling copies: 30 M copies one by one would take seconds.
  for (let filled = sample.length, total = sample.length * count; filled < total; filled *= 2) {
    out.copyWithin(header.length + filled, header.length, header.length + Math.min(filled, total - filled));
  }
  return out;
}

describe('pprof: hostile input', () => {
  it('a small gzip of 30 M empty samples is refused at its first sample, without decoding the rest', () => {
    const gz = gzipSync(repeated([0x12, 0x00], 30_000_000), { level: 1 });
    expect(gz.length).toBeLessThan(1_000_000);
    const err = thrown(() => drain(gz));
    expect(err.code).toBe(ErrorCode.CONVERT_BAD_INPUT);
    expect(err.offset).toBe(HEADER.length);
    expect(err.expected).toBe('1 values per sample');
    // Without any sample type, Go's own rule ("missing sample type information") refuses it at once.
    const untyped = thrown(() => readPprof(gzipSync(repeated([0x12, 0x00], 1000, [0x32, 0x00]))));
    expect(untyped.code).toBe(ErrorCode.CONVERT_BAD_INPUT);
    expect(untyped.offset).toBe(2);
  });

  it('3 M valid samples stream: memory is the bytes and one batch, never one object per sample', () => {
    // sample: value [7], no location.
    const bytes = repeated([0x12, 0x03, 0x12, 0x01, 0x07], 3_000_000);
    const source = readPprof(bytes);
    expect(source.sampleCount).toBe(3_000_000);
    global.gc?.();
    const before = process.memoryUsage();
    let sum = 0;
    for (const b of source.batches()) for (let i = 0; i < b.length; i++) sum += b.values[0]![i]!;
    const after = process.memoryUsage();
    expect(sum).toBe(21_000_000);
    // 3 M records as objects would be hundreds of MB; the batch is 16384 rows.
    expect(after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers).toBeLessThan(64 * 1024 * 1024);
  });

  it('a gzip that inflates past maxInflatedBytes is refused with a code, not an out-of-memory abort', () => {
    const gz = gzipSync(repeated([0x12, 0x03, 0x12, 0x01, 0x07], 1_000_000));
    const err = thrown(() => readPprof(gz, { maxInflatedBytes: 1 << 20 }));
    expect(err.code).toBe(ErrorCode.CONVERT_INPUT_TOO_LARGE);
    expect(err.expected).toMatch(/1048576 bytes/);
    expect(drain(gz)).toBe(1_000_000);
  });

  const cases: [string, number[], number, RegExp][] = [
    ['a varint cut short', [...HEADER, 0x12, 0x02, 0x12, 0x81], HEADER.length + 3, /complete varint/],
    ['a field longer than the file', [...HEADER, 0x12, 0x7f, 0x12], HEADER.length + 1, /length within/],
    ['an 11-byte varint', [...HEADER, 0x48, ...Array(10).fill(0xff), 0x01], HEADER.length + 1, /at most 10 bytes/],
    ['a group wire type', [...HEADER, 0xa3, 0x01], HEADER.length, /wire type 0, 1, 2 or 5/],
    ['a sample with the wrong wire type', [...HEADER, 0x10, 0x01], HEADER.length, /wire type 2 for sample/],
    ['a string index past the table', [0x32, 0x00, 0x0a, 0x04, 0x08, 0x09, 0x10, 0x00], 0, /below 1/],
    [
      'a sample naming a missing location',
      [...HEADER, 0x12, 0x04, 0x08, 0x05, 0x10, 0x01],
      HEADER.length + 3,
      /location id of the profile/,
    ],
    [
      'a label key past the string table',
      [...HEADER, 0x12, 0x06, 0x10, 0x01, 0x1a, 0x02, 0x08, 0x30],
      HEADER.length + 4,
      /below 3/,
    ],
    [
      'a location line naming a missing function',
      [...HEADER, 0x22, 0x06, 0x08, 0x01, 0x22, 0x02, 0x08, 0x04],
      HEADER.length + 4,
      /function id/,
    ],
    ['a location with id 0', [...HEADER, 0x22, 0x02, 0x10, 0x01], HEADER.length + 2, /above 0/],
    ['a string table not starting with ""', [0x32, 0x01, 0x61], 0, /empty first string/],
  ];
  for (const [what, bytes, offset, expected] of cases) {
    it(`${what}: a coded error at its offset`, () => {
      const err = thrown(() => drain(Buffer.from(bytes)));
      expect(err.code).toBe(ErrorCode.CONVERT_BAD_INPUT);
      expect(err.offset).toBe(offset);
      expect(err.expected).toMatch(expected);
    });
  }

  it('a corrupt gzip, and a gzip of something else, are refused; detect says no to both', () => {
    const good = readFileSync(path.join(outsideDir, 'go', 'go.cpu.pb.gz'));
    const corrupt = Buffer.from(good);
    corrupt.fill(0x55, 40, 80);
    expect(thrown(() => drain(corrupt)).code).toBe(ErrorCode.CONVERT_BAD_INPUT);
    const json = gzipSync(Buffer.from('{"nodes":[],"startTime":0,"endTime":1,"samples":[],"timeDeltas":[]}'));
    const folded = gzipSync(Buffer.from('main;work 30000000\n'));
    for (const other of [json, folded]) {
      expect(detectPprof(gunzipSync(other))).toBe(false);
      expect(detectFormat(other)).not.toBe('pprof');
      expect(thrown(() => readPprof(other)).code).toBe(ErrorCode.CONVERT_BAD_INPUT);
    }
    expect(detectPprof(gunzipSync(good))).toBe(true);
    expect(detectPprof(gunzipSync(good).subarray(0, 4096), true)).toBe(true);
    expect(detectFormat(good)).toBe('pprof');
    expect(detectFormat(good.subarray(0, 4096))).toBe('pprof');
    expect(pprofAdapter.detect(Buffer.from('HCAT\u0002\u0000\u0000\u0000'))).toBe(false);
    expect(detectPprof(Buffer.from('main;work 3\n'))).toBe(false);
  });

  it('any damage to a real file is a ProfpackError or a profile, never another exception', () => {
    const good = gunzipSync(readFileSync(path.join(outsideDir, 'datadog', 'datadog.wall.pb.gz')));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
        fc.nat(good.length),
        (edits, cut) => {
          const bytes = Buffer.from(good.subarray(0, Math.max(cut, 1)));
          for (const [at, v] of edits) if (at < bytes.length) bytes[at] = v;
          try {
            drain(bytes);
          } catch (err) {
            if (!isProfpackError(err)) throw err;
            expect(err.code).toBe(ErrorCode.CONVERT_BAD_INPUT);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
