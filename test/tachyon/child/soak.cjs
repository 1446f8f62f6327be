// An agent's life in one process: WORKERS worker threads each write
// ROTATIONS / WORKERS profiles in turn (one a rotation: a new ProfileWriter,
// samples, a flush, finalize), while the main thread, the one reader, replays
// each finalized file, checks it holds every sample, and deletes it.
// argv = backend, rotations, workers, directory. Prints one JSON line:
// rotations checked, bad files, files left, and RSS and open descriptors
// before the workers start, at half and at nine tenths of the rotations (the
// threads' heaps have reached their working size by half), and at the end.
'use strict';
require('../../fuzz/child/ts-require.cjs');
const fs = require('fs');
const path = require('path');
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
const lib = path.join(__dirname, '..', '..', '..', 'lib', 'tachyon');
const SAMPLES = 300;

if (!isMainThread) {
  const { ProfileWriter } = require(path.join(lib, 'index.ts'));
  const { which, id, count, dir } = workerData;
  let k = 0;
  const next = () => {
    const file = path.join(dir, `w${id}-${k}.bin`);
    const w = new ProfileWriter(file, {
      sampleIntervalUs: 1000,
      backend: which,
      compression: k % 4 === 3 ? 'none' : 'zstd',
      flushIntervalMs: 50,
    });
    const ids = [];
    for (let f = 0; f < 20; f++)
      ids.push(w.internFrame({ filename: `w${id}.py`, funcname: `f${(f + k) % 40}`, lineno: f }));
    for (let s = 0; s < SAMPLES; s++)
      w.writeStack(1 + (s % 3), 0, 1000 * s, 1, [ids[(s * 7) % 20], ids[s % 5], ids[0]]);
    if (k % 2 === 0) w.flush();
    w.finalize();
    parentPort.postMessage({ file, samples: SAMPLES });
    // node --expose-gc: collections at fixed points keep the threads' heaps from drifting with the machine's load.
    if (k % 25 === 24) global.gc();
    if (++k < count) setImmediate(next);
  };
  next();
} else {
  const { ProfileReader } = require(path.join(lib, 'index.ts'));
  const [which, rotationsText, workersText, dir] = process.argv.slice(2);
  const rotations = Number(rotationsText);
  const workers = Number(workersText);
  const fds = () => fs.readdirSync('/proc/self/fd').length;
  const point = () => {
    global.gc();
    return { rss: process.memoryUsage().rss, fds: fds() };
  };
  let checked = 0;
  let bad = 0;
  const at = { start: point() };
  const done = new Set();
  const finish = () => {
    const leftover = fs.readdirSync(dir).length;
    at.end = point();
    console.log(JSON.stringify({ checked, bad, leftover, ...at }));
  };
  for (let id = 0; id < workers; id++) {
    const worker = new Worker(__filename, { workerData: { which, id, count: rotations / workers, dir } });
    worker.on('message', ({ file, samples }) => {
      let n = 0;
      try {
        const reader = ProfileReader.open(file, { backend: which });
        for (const _ of reader.samples()) n++;
        reader.close();
      } catch (err) {
        console.error(err);
      }
      if (n !== samples || fs.existsSync(`${file}.journal`)) bad++;
      fs.rmSync(file);
      checked++;
      if (checked === rotations / 2) at.half = point();
      if (checked === (rotations * 9) / 10) at.late = point();
    });
    worker.on('error', (err) => {
      console.error(err);
      process.exitCode = 1;
    });
    worker.on('exit', () => {
      done.add(id);
      if (done.size === workers) finish();
    });
  }
}
