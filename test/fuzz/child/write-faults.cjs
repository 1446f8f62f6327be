// Child process for the write-fault tests: drives ProfileWriter into a fault
// and prints JSON lines describing what happened (never throws out: a crash
// or a non-ProfpackError is what the parent looks for).
//   node write-faults.cjs devfull <backend> <compression>
//   node write-faults.cjs pipe <backend> <compression> <fifo>
//   node write-faults.cjs efbig <backend> <compression> <file>  (run under a file-size limit)
//   node write-faults.cjs kill <backend> <compression> <file>   (runs until killed)
//   node write-faults.cjs kill-early <backend> <compression> <file>  (a few samples, then waits to be killed)
//   node write-faults.cjs kill-flush <backend> <compression> <file>  (flush() every 500 samples, until killed)
'use strict';
const fs = require('fs');
const path = require('path');
require('./ts-require.cjs');

const lib = path.join(__dirname, '..', '..', '..', 'lib');
const { ProfileWriter } = require(path.join(lib, 'tachyon', 'index.ts'));
const { isProfpackError } = require(path.join(lib, 'errors.ts'));
const { busySample } = require(path.join(__dirname, 'samples.cjs'));

const [mode, backend, compression, target] = process.argv.slice(2);
const say = (obj) => fs.writeSync(1, JSON.stringify(obj) + '\n');
const describe = (err) => ({
  profpack: isProfpackError(err),
  name: err && err.name,
  code: err && err.code,
  message: String(err && err.message).slice(0, 200),
});

function attempt(what, fn) {
  try {
    const value = fn();
    return { what, ok: true, value };
  } catch (err) {
    return { what, ok: false, error: describe(err) };
  }
}

if (mode === 'devfull' || mode === 'pipe' || mode === 'efbig') {
  const file = mode === 'devfull' ? '/dev/full' : target;
  const opened = attempt('open', () => new ProfileWriter(file, { sampleIntervalUs: 1000, compression, backend }));
  say({ step: 'open', ok: opened.ok, error: opened.error });
  if (opened.ok) {
    const writer = opened.value;
    let written = 0;
    let failure;
    // Enough for the first flush: 512 KiB of records, or under zstd 4 MiB of them (~232,000 busy samples) compressed.
    for (let i = 0; i < 600000 && failure === undefined; i++) {
      const r = attempt('writeSample', () => writer.writeSample(busySample(i), 1000 + i));
      if (r.ok) written++;
      else failure = r.error;
    }
    say({ step: 'write', written, error: failure, state: writer.state });
    const fin = attempt('finalize', () => writer.finalize());
    say({ step: 'finalize', ok: fin.ok, error: fin.error, state: writer.state });
    const closed = attempt('close', () => writer.close());
    say({ step: 'close', ok: closed.ok, error: closed.error, state: writer.state });
  }
  say({ step: 'done' });
} else if (mode === 'kill') {
  const writer = new ProfileWriter(target, { sampleIntervalUs: 1000, compression, backend });
  let size = 0;
  for (let i = 0; ; i++) {
    writer.writeSample(busySample(i), 1000 + i);
    const now = fs.statSync(target).size;
    if (now !== size) {
      size = now;
      // A flush reached the file: everything it holds is acknowledged.
      say({ step: 'flushed', size, samplesWritten: i + 1 });
    }
  }
} else if (mode === 'kill-early') {
  // Far less than the 512 KiB buffer (4 MiB under zstd): nothing but the header has been flushed.
  const writer = new ProfileWriter(target, { sampleIntervalUs: 1000, compression, backend });
  for (let i = 0; i < 100; i++) writer.writeSample(busySample(i), 1000 + i);
  say({ step: 'ready', size: fs.statSync(target).size, state: writer.state });
  setInterval(() => writer.state, 1000);
} else if (mode === 'kill-flush') {
  const writer = new ProfileWriter(target, { sampleIntervalUs: 1000, compression, backend });
  for (let i = 0; ; i++) {
    writer.writeSample(busySample(i), 1000 + i);
    if (i % 500 === 499) {
      const position = writer.flush();
      // Acknowledged: every record of samples 0..i (busySample never repeats a stack).
      say({ step: 'flush', position, samplesWritten: i + 1, bytesWritten: writer.stats.bytesWritten });
    }
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
