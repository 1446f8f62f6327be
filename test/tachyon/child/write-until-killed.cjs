// A process that writes a profile and waits to be killed: argv = backend,
// compression, path, mode. 'flush': writes 3 x 2,000 samples with a flush()
// after each, then 1,500 more unflushed, prints "flushed <samples>" and
// "waiting", and waits. 'interval': flushIntervalMs 40; writes batches of 500
// samples with a 100 ms pause after each (a timed flush runs in every pause)
// and prints "batch <samples>" after each pause, for ever.
// Exports the writer's options and the sample sequence so the test can write the same file.
'use strict';
const path = require('path');

/** Sample s: three threads; thread 3 repeats its stack in runs (REPEAT records held back). */
function writeSamples(writer, ids, from, to) {
  for (let s = from; s < to; s++) {
    const thread = 1 + (s % 3);
    const depth = thread === 3 ? 4 : 2 + (s % 5);
    const stack = [];
    for (let d = 0; d < depth; d++) stack.push(ids[thread === 3 ? d : (s * 7 + d * 13) % ids.length]);
    writer.writeStack(thread, 0, 1_000_000 + 250 * s, thread === 3 ? 1 : s & 0xff, stack);
  }
}

/** The writer every mode opens (flush mode adds mode 'cpu', interval mode a flush interval). */
function writerOptions(backend, compression) {
  return { sampleIntervalUs: 250, startTimeUs: 1_000_000, backend, compression };
}

function internFrames(writer) {
  const ids = [];
  for (let i = 0; i < 64; i++)
    ids.push(
      writer.internFrame({
        filename: `pkg/mod${i % 7}.py`,
        funcname: `fn_${i}`,
        lineno: 10 + i,
        endLineno: 12 + i,
        column: i % 9,
        endColumn: 20,
        opcode: i % 3 === 0 ? null : i,
      }),
    );
  return ids;
}

module.exports = { writerOptions, writeSamples, internFrames };

if (require.main === module) {
  require('../../fuzz/child/ts-require.cjs');
  const { ProfileWriter } = require(path.join(__dirname, '..', '..', '..', 'lib', 'tachyon', 'index.ts'));
  const [which, compression, file, mode] = process.argv.slice(2);
  if (mode === 'flush') {
    const w = new ProfileWriter(file, { ...writerOptions(which, compression), mode: 'cpu' });
    const ids = internFrames(w);
    let written = 0;
    for (let k = 0; k < 3; k++) {
      writeSamples(w, ids, written, written + 2000);
      written += 2000;
      w.flush();
    }
    process.stdout.write(`flushed ${written}\n`);
    writeSamples(w, ids, written, written + 1500);
    process.stdout.write('waiting\n');
    setInterval(() => {}, 1000);
  } else {
    const w = new ProfileWriter(file, { ...writerOptions(which, compression), flushIntervalMs: 40 });
    const ids = internFrames(w);
    let written = 0;
    const batch = () => {
      writeSamples(w, ids, written, written + 500);
      written += 500;
      setTimeout(() => {
        process.stdout.write(`batch ${written}\n`);
        batch();
      }, 100);
    };
    batch();
  }
}
