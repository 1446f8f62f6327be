/**
 * ProfileWriter's header on disk from creation and its flush(): what a flush
 * guarantees is on disk (every record encoded so far; zstd: decodable from the
 * unterminated frame), what it leaves pending (REPEAT runs), and that a flush
 * changes no raw byte of the finished file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, ProfpackError } from '../../../lib/errors';
import { ProfileReader, type Sample } from '../../../lib/tachyon/read/reader';
import { ProfileWriter, type FrameInfo, type SampleInterpreterInfo } from '../../../lib/tachyon/write/index';
import { inflatePrefix, readCode } from '../../support/refusals';
import { scratchDir } from '../../support/scratch-dir';
import { testedBackends } from '../../support/backends';

const dir = scratchDir('profpack-writer-flush-');
let n = 0;
const tmp = (tag: string) => path.join(dir, `${tag}-${n++}.bin`);

function frame(i: number): FrameInfo {
  return {
    filename: `mod${i % 5}.py`,
    funcname: `fn${i}`,
    location: { lineno: i, endLineno: i + 1, colOffset: 2, endColOffset: 9 },
    opcode: i % 100,
  };
}

/** Sample i: two threads; thread 2's stack stays the same for runs of 7 samples (REPEAT records). */
function sample(i: number): SampleInterpreterInfo[] {
  return [
    {
      interpreterId: 0,
      threads: [
        {
          threadId: 1,
          status: i & 3,
          frameInfo: Array.from({ length: 12 }, (_, d) => frame(d === 0 ? 50 + (i % 13) : d)),
        },
        {
          threadId: 2,
          status: 1,
          frameInfo: Array.from({ length: 5 }, (_, d) => frame(d === 0 ? 80 + (Math.floor(i / 7) % 3) : 20 + d)),
        },
      ],
    },
  ];
}

function samplesOf(file: string): Sample[] {
  const reader = ProfileReader.open(file);
  const all = [...reader.samples()].map((s) => ({ ...s, stack: [...s.stack] }));
  reader.close();
  return all;
}

for (const which of testedBackends) {
  describe(`${which} writer`, () => {
    for (const compression of ['none', 'zstd'] as const) {
      it(`${compression}: the 64 zero header bytes are on disk at creation; readers say not finalized`, () => {
        const file = tmp('created');
        const writer = new ProfileWriter(file, { sampleIntervalUs: 1000, compression, backend: which });
        writer.writeSample(sample(0), 1000);
        const bytes = fs.readFileSync(file);
        expect(bytes.length).toBe(64);
        expect(bytes.every((b) => b === 0)).toBe(true);
        for (const r of testedBackends) expect(readCode(file, r)).toBe(ErrorCode.TACHYON_NOT_FINALIZED);
        writer.finalize();
        expect(readCode(file, which)).toBe('ok');
      });
    }

    it('none: flush() puts every encoded record on disk, holds pending REPEAT runs back, changes no byte', () => {
      const flushed = tmp('flushed-none');
      const plain = tmp('plain-none');
      const writer = new ProfileWriter(flushed, { sampleIntervalUs: 1000, compression: 'none', backend: which });
      const reference = new ProfileWriter(plain, { sampleIntervalUs: 1000, compression: 'none', backend: which });
      expect(writer.flush()).toBe(64);
      let positions = 0;
      for (let i = 0; i < 3000; i++) {
        writer.writeSample(sample(i), 1000 + 10 * i);
        reference.writeSample(sample(i), 1000 + 10 * i);
        if (i % 250 === 249) {
          const pos = writer.flush();
          positions++;
          expect(fs.statSync(flushed).size).toBe(pos);
          // What was flushed is every record encoded so far (REPEAT runs not yet closed are not records yet).
          expect(pos).toBe(64 + writer.stats.bytesWritten);
          // A pending REPEAT run of thread 2 (its stack repeats for 7 samples) is held back.
          const pendingBefore = writer.stats.repeatSamples;
          writer.writeSample([{ interpreterId: 0, threads: [sample(i)[0]!.threads[1]!] }], 1000 + 10 * i + 5);
          reference.writeSample([{ interpreterId: 0, threads: [sample(i)[0]!.threads[1]!] }], 1000 + 10 * i + 5);
          expect(writer.flush()).toBe(pos);
          expect(writer.stats.repeatSamples).toBe(pendingBefore);
        }
      }
      expect(positions).toBe(12);
      const onDisk = fs.readFileSync(flushed);
      writer.finalize();
      reference.finalize();
      const a = fs.readFileSync(flushed);
      const b = fs.readFileSync(plain);
      expect(Buffer.compare(a, b)).toBe(0);
      // What the flushes put on disk is the finished file's prefix.
      expect(Buffer.compare(onDisk.subarray(64), b.subarray(64, onDisk.length))).toBe(0);
    });

    it('zstd: after flush() the unterminated frame on disk decompresses to every record encoded so far', () => {
      const flushed = tmp('flushed-zstd');
      const raw = tmp('raw');
      const plain = tmp('plain-zstd');
      const writer = new ProfileWriter(flushed, { sampleIntervalUs: 1000, compression: 'zstd', backend: which });
      const rawWriter = new ProfileWriter(raw, { sampleIntervalUs: 1000, compression: 'none', backend: which });
      const reference = new ProfileWriter(plain, { sampleIntervalUs: 1000, compression: 'zstd', backend: which });
      // Nothing encoded yet: a flush writes no zstd byte (no empty block).
      expect(writer.flush()).toBe(64);
      for (let i = 0; i < 20_000; i++) {
        for (const w of [writer, rawWriter, reference]) w.writeSample(sample(i), 1000 + 10 * i);
        if (i % 4000 === 3999) {
          const pos = writer.flush();
          rawWriter.flush();
          const onDisk = fs.readFileSync(flushed);
          expect(onDisk.length).toBe(pos);
          const records = fs.readFileSync(raw).subarray(64);
          expect(records.length).toBe(writer.stats.bytesWritten);
          expect(Buffer.compare(inflatePrefix(onDisk.subarray(64)), records)).toBe(0);
          // A second flush with nothing new adds nothing.
          expect(writer.flush()).toBe(pos);
        }
      }
      writer.finalize();
      rawWriter.finalize();
      reference.finalize();
      expect(readCode(flushed, which)).toBe('ok');
      // The flushed frame has more blocks than CPython's, the samples are the same.
      expect(samplesOf(flushed)).toEqual(samplesOf(plain));
    }, 60_000);

    for (const stackCoding of ['stacktable', 'predict'] as const) {
      it(`version 2 (${stackCoding}): flush() seals the open block and puts every block on disk, decodable`, () => {
        const flushed = tmp(`v2-flushed-${stackCoding}`);
        const plain = tmp(`v2-plain-${stackCoding}`);
        const options = {
          sampleIntervalUs: 1000,
          compression: 'zstd' as const,
          formatVersion: 2 as const,
          stackCoding,
          backend: which,
        };
        const writer = new ProfileWriter(flushed, options);
        const reference = new ProfileWriter(plain, options);
        const ids = Array.from({ length: 40 }, (_, i) =>
          writer.internFrame({ filename: `m${i % 3}.py`, funcname: `f${i}`, lineno: i + 1 }),
        );
        for (let i = 0; i < 40; i++)
          reference.internFrame({ filename: `m${i % 3}.py`, funcname: `f${i}`, lineno: i + 1 });
        const stackOf = (i: number) => ids.slice(i % 7, 10 + (i % 23));
        // Half a block: flush() seals it (the journal names only whole blocks), so it is on disk and decodes.
        for (let i = 0; i < 30_000; i++)
          for (const w of [writer, reference]) w.writeStack(1 + (i % 3), 0, 1000 + 10 * i, 1, stackOf(i));
        expect(writer.flush()).toBeGreaterThan(64);
        const first = inflatePrefix(fs.readFileSync(flushed).subarray(64));
        expect(first.length).toBeGreaterThan(0);
        // Past one block (65,536 samples): the first block is on disk and decodes.
        for (let i = 30_000; i < 80_000; i++)
          for (const w of [writer, reference]) w.writeStack(1 + (i % 3), 0, 1000 + 10 * i, 1, stackOf(i));
        const pos = writer.flush();
        const onDisk = fs.readFileSync(flushed);
        expect(onDisk.length).toBe(pos);
        const prefix = inflatePrefix(onDisk.subarray(64));
        expect(prefix.length).toBeGreaterThan(first.length);
        expect(Buffer.compare(prefix.subarray(0, first.length), first)).toBe(0);
        writer.finalize();
        reference.finalize();
        const reader = ProfileReader.open(flushed);
        const region = inflatePrefix(fs.readFileSync(flushed).subarray(64, reader.layout.stringTableOffset));
        reader.close();
        // What the flush put on disk is the start of the finished region, and the samples are unchanged.
        expect(Buffer.compare(region.subarray(0, prefix.length), prefix)).toBe(0);
        expect(samplesOf(flushed)).toEqual(samplesOf(plain));
      }, 60_000);
    }

    it('flush() errors: a write error is ERR_TACHYON_WRITE_IO and breaks the writer; closed writers refuse', () => {
      for (const compression of ['none', 'zstd'] as const) {
        const file = tmp(`ebadf-${compression}`);
        const writer = new ProfileWriter(file, { sampleIntervalUs: 1000, compression, backend: which });
        for (let i = 0; i < 10; i++) writer.writeSample(sample(i), 1000 + i);
        fs.closeSync((writer as unknown as { fd: number }).fd);
        let failure: unknown;
        try {
          writer.flush();
        } catch (err) {
          failure = err;
        }
        expect(failure).toBeInstanceOf(ProfpackError);
        expect((failure as ProfpackError).code).toBe(ErrorCode.TACHYON_WRITE_IO);
        expect((failure as ProfpackError).message).toMatch(/EBADF/);
        expect(writer.state).toBe('broken');
        expect(() => writer.flush()).toThrow(expect.objectContaining({ code: ErrorCode.TACHYON_WRITE_BROKEN }));
        writer.close();
        expect(() => writer.flush()).toThrow(expect.objectContaining({ code: ErrorCode.TACHYON_WRITE_CLOSED }));
      }
    });
  });
}
