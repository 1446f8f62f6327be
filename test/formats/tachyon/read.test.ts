// Every shared Tachyon vector through the model adapter, against CPython
// 3.15.2's own dump (*.expected.json): each thread's samples (stack, status)
// in order, counted by records; each record's time is its first sample's;
// the time column totals each thread's real span plus one nominal interval
// (CPU and GIL modes: the interval per tick);
// files CPython refuses are refused with the same message.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { backend } from '../../../lib/backend';
import { isProfpackError } from '../../../lib/errors';
import { tachyonAdapter } from '../../../lib/formats/tachyon/index';
import { readTachyon } from '../../../lib/formats/tachyon/read';
import type { Frame, ProfileSource } from '../../../lib/profile/index';
import { readJsonExact, sharedPath } from '../../support/environment';
import type { Expected, ExpectedSample } from '../../support/vectors';

const dir = sharedPath('vectors', 'tachyon');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bin'))
  .sort();

const absent = (v: number | null): number | null => (v === -1 ? null : v);
const expectedKey = (s: ExpectedSample): string =>
  JSON.stringify([
    s.status,
    s.frames.map((f) => [
      f.filename,
      f.funcname,
      absent(f.lineno),
      absent(f.end_lineno),
      absent(f.column),
      absent(f.end_column),
      f.opcode,
    ]),
  ]);
const modelKey = (status: number, frames: Frame[]): string =>
  JSON.stringify([
    status,
    frames.map((f) => [f.filename, f.funcname, f.lineno, f.endLineno, f.column, f.endColumn, f.opcode]),
  ]);

interface ThreadRecords {
  keys: string[];
  counts: number[];
  times: number[];
  timeValue: number;
}

function records(source: ProfileSource): Map<string, ThreadRecords> {
  const out = new Map<string, ThreadRecords>();
  for (const b of source.batches()) {
    for (let i = 0; i < b.length; i++) {
      const t = source.threads[b.thread[i]!]!;
      const key = `${t.threadId}@${t.interpreterId}`;
      let r = out.get(key);
      if (!r) out.set(key, (r = { keys: [], counts: [], times: [], timeValue: 0 }));
      r.keys.push(
        modelKey(
          b.status[i]!,
          source.stacks.toArray(b.stack[i]!).map((f) => source.frames[f]!),
        ),
      );
      r.counts.push(b.values[0]![i]!);
      r.times.push(b.time[i]!);
      r.timeValue += b.values[1]![i]!;
    }
  }
  return out;
}

describe(`Tachyon vectors through the model adapter (${backend.name} backend)`, () => {
  it('finds the vectors', () => {
    expect(files.length).toBeGreaterThanOrEqual(70);
  });
  for (const file of files) {
    it(file, () => {
      const expected = readJsonExact(`${dir}/${file.replace(/\.bin$/, '.expected.json')}`) as Expected;
      let got: Map<string, ThreadRecords>;
      let source: ProfileSource;
      try {
        source = tachyonAdapter.read({ path: `${dir}/${file}` }, {});
        try {
          got = records(source);
        } finally {
          source.close?.();
        }
      } catch (err) {
        expect(isProfpackError(err)).toBe(true);
        expect(expected.stage).not.toBe('ok');
        expect((err as Error).message).toContain(expected.error!.message);
        return;
      }
      expect(expected.stage).toBe('ok');
      const info = expected.info;
      expect(source.meta.sampleTypes).toEqual([
        { type: 'samples', unit: 'count' },
        { type: info.mode === 1 ? 'cpu' : 'wall', unit: 'nanoseconds' },
      ]);
      expect(source.meta.defaultSampleType).toBe(0);
      const perThread = new Map<string, ExpectedSample[]>();
      for (const s of expected.samples) {
        const key = `${s.thread_id}@${s.interpreter_id}`;
        if (!perThread.has(key)) perThread.set(key, []);
        perThread.get(key)!.push(s);
      }
      expect([...got.keys()].sort()).toEqual([...perThread.keys()].sort());
      for (const [key, want] of perThread) {
        const r = got.get(key)!;
        const ticks: string[] = [];
        const firstTimes: number[] = [];
        let at = 0;
        r.keys.forEach((k, j) => {
          firstTimes.push(Number(want[at]!.timestamp_us));
          for (let n = 0; n < r.counts[j]!; n++) ticks.push(k);
          at += r.counts[j]!;
        });
        expect(ticks).toEqual(want.map(expectedKey));
        expect(r.times).toEqual(firstTimes);
        const ts = want.map((s) => Number(s.timestamp_us));
        if ((info.mode === 1 || info.mode === 2) && info.sample_interval_us > 0) {
          // CPU and GIL modes: a tick weighs the interval, as CPython's collectors count it.
          expect(r.timeValue).toBe(want.length * Number(info.sample_interval_us) * 1000);
        } else if (ts.every((t, i) => i === 0 || t >= ts[i - 1]!) && info.sample_interval_us > 0) {
          expect(r.timeValue).toBe((ts[ts.length - 1]! - ts[0]! + Number(info.sample_interval_us)) * 1000);
        }
      }
    });
  }

  it('a buffer, and tiny reader buffers that rebuild the stack trie every few records, read as the file does', () => {
    for (const name of ['s06', 's19', 's20', 'r02']) {
      const path = `${dir}/${files.find((f) => f.startsWith(name))!}`;
      const a = records(tachyonAdapter.read({ path }, {}));
      expect(records(tachyonAdapter.read({ bytes: readFileSync(path) }, {}))).toEqual(a);
      // Buffers cut REPEAT runs into parts (more records, the same ticks); trie resets renumber every node.
      const tiny = records(
        readTachyon(
          { bytes: readFileSync(path) },
          { keepDecompressedLimit: 0, tuning: { zstdChunk: 64, events: 6, timestamps: 3, nodes: 4096, maxNodes: 64 } },
        ),
      );
      const ticks = (m: Map<string, ThreadRecords>) =>
        new Map([...m].map(([k, r]) => [k, r.keys.flatMap((key, j) => new Array<string>(r.counts[j]!).fill(key))]));
      expect(ticks(tiny)).toEqual(ticks(a));
    }
  });

  it('detects both byte orders and nothing else', () => {
    expect(tachyonAdapter.detect(new TextEncoder().encode('HCAT\u0001'))).toBe(true);
    expect(tachyonAdapter.detect(new TextEncoder().encode('TACH\u0001'))).toBe(true);
    expect(tachyonAdapter.detect(new TextEncoder().encode('{"nodes"'))).toBe(false);
    expect(tachyonAdapter.detect(new Uint8Array([0x1f, 0x8b]))).toBe(false);
  });
});
