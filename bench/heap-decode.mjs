// `npm run bench -- heap-decode`: decoding a big version-2 heap section (issue 38), the addon's record decoder
// (native/tachyon/v2/heap_decoder.cc) against the JS twin (lib/tachyon/codec/heap/decode.ts), in interleaved rounds
// (medians), both through HeapSectionDecoder.records() with the stackOf openHeapTrace gives it (lib/profile's
// StackTable.intern). The file is written here by ProfileWriter (zstd, its default): BENCH_HEAP_POLLS
// polls (default 400) of 4,000 allocations each over 2,000 stacks of 8..40 frames, and each poll frees about half of
// what the thread holds.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { interleaveRounds, machine, median, table } from './_harness.mjs';
import { ProfileWriter } from '../dist/index.js';
import { HeapStacks } from '../dist/record/wire/heap-events.js';
import { StackTable } from '../dist/profile/stack-table.js';
import { readProfileV2 } from '../dist/tachyon/read/v2/file.js';
import { HeapSectionDecoder } from '../dist/tachyon/codec/heap/decode.js';
import { v2Native } from '../dist/tachyon/codec/native.js';

if (v2Native === null) throw new Error('bench heap-decode needs the native addon');
const polls = Number(process.env.BENCH_HEAP_POLLS ?? 400);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'profpack-heap-decode-'));
const file = path.join(tmp, 'heap.tach');
const START = 1_000_000;

// A deterministic program: xorshift picks stacks, sizes and frees.
let seed = 38;
const rand = (n) => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) % n;
};
const stacks = new HeapStacks();
for (let f = 0; f < 3000; f++)
  stacks.callFrames.push({
    functionName: `f${f}`,
    url: `m${f % 40}.js`,
    lineNumber: f,
    columnNumber: 1,
    scriptId: '0',
  });
const stackIds = [];
for (let s = 0; s < 2000; s++) {
  let id = -1;
  const depth = 8 + rand(33);
  for (let d = 0; d < depth; d++) id = stacks.add(id, d < 6 ? d : rand(3000));
  stackIds.push(id);
}
const w = new ProfileWriter(file, { sampleIntervalUs: 1000n, startTimeUs: BigInt(START), formatVersion: 2 });
w.writeStack(1n, 0, BigInt(START + 1), 0, [w.internFrame({ filename: 'cpu.js', funcname: 'spin' })]);
const sink = w.heapSink();
sink.begin({ intervalBytes: 1 << 19 });
const held = [[], []];
let ordinal = 1;
let objects = 0;
for (let p = 0; p < polls; p++) {
  const t = p % 2;
  const timeUs = START + 1000 * (p + 1);
  const made = Array.from({ length: 4000 }, () => (ordinal += 1 + rand(3)));
  const keep = [];
  const freed = [];
  for (const o of held[t]) (rand(2) === 0 ? freed : keep).push(o);
  held[t] = [...keep, ...made];
  sink.allocations({
    threadId: 100 + t,
    timeUs,
    sinceUs: timeUs - 1000,
    ordinals: Uint32Array.from(made),
    sizes: Uint32Array.from(made, () => 16 + 8 * rand(64)),
    stackIds: Uint32Array.from(made, () => stackIds[rand(stackIds.length)]),
    shortLived: 3,
    stacks,
  });
  if (freed.length > 0)
    sink.frees({ threadId: 100 + t, timeUs, sinceUs: timeUs - 1000, ordinals: Uint32Array.from(freed) });
  objects += made.length;
}
w.finalize();
const profile = readProfileV2(readFileSync(file));
const section = profile.heap;

function decodeAll(native) {
  const table = new StackTable();
  const stackOf = (frames, depth) => table.intern(frames, depth);
  const decoder = new HeapSectionDecoder(section.bytes, section.offset, START, profile.frames.length, stackOf, native);
  let events = 0;
  for (const r of decoder.records()) events += r.ordinals.length + r.freed.length;
  return events;
}
const events = decodeAll(null);
if (decodeAll(v2Native) !== events) throw new Error('the twins read different event counts');
const times = interleaveRounds({ js: () => decodeAll(null), native: () => decodeAll(v2Native) }, { rounds, warmup: 1 });
const ratio = median(times.native.map((t, i) => t / times.js[i]));
console.log(machine());
console.log(
  `\n${polls} polls, ${objects} allocations, ${events} events; heap section ${section.bytes.length} bytes (zstd); ` +
    `median of ${rounds} interleaved rounds after 1 warm-up\n`,
);
console.log(
  table(
    ['decoder', 's per pass', 'M events/s', 'native / js'],
    [
      ['js', median(times.js).toFixed(3), (events / median(times.js) / 1e6).toFixed(2), ''],
      ['native', median(times.native).toFixed(3), (events / median(times.native) / 1e6).toFixed(2), ratio.toFixed(3)],
    ],
  ),
);
rmSync(tmp, { recursive: true, force: true });
