// Preload for bench/heap.mjs's `parts`: profpack's heap sampler alone in the
// program (as _heap_sampler.cjs), cut at one stage ($BENCH_HEAP_STAGE), so that
// the stages' differences in target CPU decompose what it costs:
// - load: the heap module loaded and the sampler addon probed (dlopen), nothing started;
// - start: V8's sampling heap profiler started (its per-sample stack capture), stopped at exit, never polled;
//   start-count: the same without the look before each GC (shortLived 'count'); start-nobuffers: the same
//   without the Buffer and ArrayBuffer sampler (buffers false): what those two add to the start;
// - final: start, and the last poll at exit (a full GC first, then the poll), nothing timed;
// - timed: the whole (_heap_sampler.cjs): timed polls by the recorder's pacing and 1-s timer, and the last one.
// Writes `heap parts: {json}` to stderr at exit: CPU ms of the preload's load, of the timed polls, of the last
// poll's GC and of the last poll itself (process.cpuUsage around each).
const path = require('node:path');
const stage = process.env.BENCH_HEAP_STAGE;
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const atStart = cpuMs();
// The sampler's module as the recorder loads it (lib/record/program/heap), then the recorder and its options.
const { heapSamplerChoice } = require(path.join(__dirname, '..', 'dist', 'record', 'program', 'heap'));
heapSamplerChoice();
const { HeapRecorder } = require(path.join(__dirname, '..', 'dist', 'record', 'program', 'heap-recorder'));
const { checkHeapOptions } = require(path.join(__dirname, '..', 'dist', 'record', 'settings', 'heap-options'));
const parts = { loadMs: cpuMs() - atStart, timedPolls: 0, timedMs: 0, lastGcMs: 0, lastPollMs: 0 };
function fullGc() {
  require('node:v8').setFlagsFromString('--expose-gc');
  const gc = require('node:vm').runInNewContext('gc');
  require('node:v8').setFlagsFromString('--no-expose-gc');
  gc();
}
const intervalBytes = Number(process.env.BENCH_HEAP_INTERVAL);
const report = () => process.stderr.write(`heap parts: ${JSON.stringify(parts)}\n`);
if (stage === 'load') process.on('exit', report);
else {
  const options = { intervalBytes };
  if (stage === 'start-count') options.shortLived = 'count';
  if (stage === 'start-nobuffers') options.buffers = false;
  const recorder = new HeapRecorder(checkHeapOptions(options), () => {}, 0);
  const stop =
    stage === 'timed'
      ? recorder.drive(() => {
          const before = cpuMs();
          recorder.poll();
          parts.timedMs += cpuMs() - before;
        }, 1000)
      : () => {};
  process.on('exit', () => {
    stop();
    parts.timedPolls = recorder.polls;
    if (!stage.startsWith('start')) {
      // The last poll collects first (sampler.ts); here the GC and the poll are timed apart: the GC taken as
      // the sampler takes it, then the poll told it is an urgent timed one (no pacing, no collection).
      const before = cpuMs();
      fullGc();
      const gcDone = cpuMs();
      Object.assign(recorder, { timed: true, urgent: true });
      recorder.poll();
      parts.lastGcMs = gcDone - before;
      parts.lastPollMs = cpuMs() - gcDone;
    }
    recorder.dispose();
    report();
  });
}
