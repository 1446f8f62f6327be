import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readProfileV2 } from '../../../lib/tachyon/read/v2/file';
import { memoryWriter } from '../../support/memory-writer';
import { sharedPath } from '../../support/environment';
// The benchmark's loader: the same Tachyon-shaped samples the sizes in bench/RESULTS.md come from.
// @ts-expect-error plain ESM helper without types
import { loadStream } from '../../../bench/_streams.mjs';

interface StreamSample {
  threadId: bigint;
  interpreterId: number;
  timestampUs: number;
  status: number;
  stack: number[];
}

const streams = readdirSync(sharedPath('data', 'stacks'))
  .filter((f) => f.endsWith('.stacks.json.gz'))
  .map((f) => f.slice(0, -'.stacks.json.gz'.length));

describe('version 2 on the real and synthetic stack streams', () => {
  it('finds the streams', () => {
    expect(streams.length).toBeGreaterThanOrEqual(8);
  });

  for (const name of streams) {
    it(`round-trips every sample of ${name} with both stack codings`, () => {
      const stream = loadStream(name) as {
        frames: {
          filename: string;
          funcname: string;
          lineno: number;
          endLineno: number;
          column: number;
          endColumn: number;
          opcode: number | null;
        }[];
        samples: StreamSample[];
        intervalUs: number;
      };
      for (const stackCoding of ['predict', 'stacktable'] as const) {
        const { writer: w, bytes } = memoryWriter(
          {
            sampleIntervalUs: stream.intervalUs,
            startTimeUs: 1_000_000,
            formatVersion: 2,
            stackCoding,
            compression: 'none',
          },
          { compressTables: false },
        );
        const ids = stream.frames.map((f) => w.internFrame(f));
        const written = stream.samples.map((s) => ({ ...s, stack: s.stack.map((f) => ids[f]!) }));
        for (const s of written) w.writeStack(s.threadId, s.interpreterId, s.timestampUs, s.status, s.stack);
        let i = 0;
        w.finalize();
        readProfileV2(bytes()).forEachSample((threadId, interpreterId, timestampUs, status, stack, depth) => {
          const s = written[i++]!;
          if (
            threadId !== s.threadId ||
            interpreterId !== s.interpreterId ||
            timestampUs !== BigInt(s.timestampUs) ||
            status !== s.status ||
            depth !== s.stack.length
          ) {
            expect({ i, threadId, interpreterId, timestampUs, status, depth }).toEqual({
              i,
              ...s,
              timestampUs: BigInt(s.timestampUs),
              depth: s.stack.length,
            });
          }
          for (let k = 0; k < depth; k++)
            if (stack[k] !== s.stack[k]) expect(Array.from(stack.subarray(0, depth))).toEqual(s.stack);
        });
        expect(i).toBe(written.length);
      }
    });
  }
});
