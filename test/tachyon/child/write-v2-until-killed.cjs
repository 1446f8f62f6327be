// A process that writes a version-2 profile with heap events and waits to be
// killed: argv = backend, compression, path. Writes 3 parts (2,000 samples
// and 20 heap polls each) with a flush() after each, then a 4th part
// unflushed, prints "flushed <samples>" and "waiting", and waits.
// Exports the sequence so the test can give a writer the same input.
'use strict';
const path = require('path');
const { writeSamples, internFrames } = require('./write-until-killed.cjs');

const SAMPLES_PER_PART = 2000;
const POLLS_PER_PART = 20;

/** A few V8 stacks over 8 call frames, in the recorder's stack tree (lib/record/wire HeapStacks). */
function makeStacks(HeapStacks) {
  const stacks = new HeapStacks();
  for (let f = 0; f < 8; f++)
    stacks.callFrames.push({
      functionName: `alloc${f}`,
      url: `app${f % 2}.js`,
      lineNumber: f,
      columnNumber: 1,
      scriptId: '1',
    });
  const ids = [];
  for (let s = 0; s < 4; s++) {
    let id = -1;
    for (let d = 0; d <= s; d++) id = stacks.add(id, (s + d * 3) % 8);
    ids.push(id);
  }
  return { stacks, ids };
}

/** Poll p of thread 1: three allocations, and the first object of poll p-2 freed. */
function feedPolls(sink, heap, from, to) {
  sink.begin({ intervalBytes: 1024 });
  for (let p = from; p < to; p++) {
    const timeUs = 1_000_000 + 10_000 * (p + 1);
    const ordinals = Uint32Array.from([3 * p + 1, 3 * p + 2, 3 * p + 3]);
    sink.allocations({
      threadId: 1,
      timeUs,
      sinceUs: timeUs - 10_000,
      ordinals,
      sizes: Uint32Array.from([64 * ((p % 5) + 1), 32, 4096]),
      stackIds: Uint32Array.from([heap.ids[p % 4], heap.ids[(p + 1) % 4], heap.ids[3]]),
      shortLived: p % 3,
      stacks: heap.stacks,
    });
    sink.frees({
      threadId: 1,
      timeUs,
      sinceUs: timeUs - 10_000,
      ordinals: Uint32Array.from(p >= 2 ? [3 * p - 5] : []),
    });
  }
}

/** Part k of the sequence: its samples and heap polls. */
function writePart(writer, sink, ids, heap, k) {
  writeSamples(writer, ids, k * SAMPLES_PER_PART, (k + 1) * SAMPLES_PER_PART);
  feedPolls(sink, heap, k * POLLS_PER_PART, (k + 1) * POLLS_PER_PART);
}

function writerOptions(backend, compression) {
  return { sampleIntervalUs: 250, startTimeUs: 1_000_000, backend, compression, formatVersion: 2 };
}

module.exports = { writerOptions, writePart, makeStacks, internFrames, SAMPLES_PER_PART };

if (require.main === module) {
  require('../../fuzz/child/ts-require.cjs');
  const lib = path.join(__dirname, '..', '..', '..', 'lib');
  // The package's ProfileWriter: its heapSink() reads V8 call frames by default (lib/profile-writer.ts).
  const { ProfileWriter } = require(path.join(lib, 'index.ts'));
  const { HeapStacks } = require(path.join(lib, 'record', 'wire', 'heap-events.ts'));
  const [which, compression, file] = process.argv.slice(2);
  const w = new ProfileWriter(file, writerOptions(which, compression));
  const ids = internFrames(w);
  const sink = w.heapSink();
  const heap = makeStacks(HeapStacks);
  for (let k = 0; k < 3; k++) {
    writePart(w, sink, ids, heap, k);
    w.flush();
  }
  process.stdout.write(`flushed ${3 * SAMPLES_PER_PART}\n`);
  writePart(w, sink, ids, heap, 3);
  process.stdout.write('waiting\n');
  setInterval(() => {}, 1000);
}
