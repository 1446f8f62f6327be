// Preload for bench/heap.mjs: profpack's heap sampler alone in the program, as
// @datadog/pprof's preload runs its profiler: no writer process, no CPU
// sampling. A HeapRecorder at $BENCH_HEAP_INTERVAL bytes (the recorder's own
// pacing, lib/record/program/heap-recorder.ts), polled by the recorder's 1-s timer and
// once at exit, each poll encoded as its heap frame and dropped.
// PROFPACK_HEAP_SAMPLER chooses V8's API or the inspector (probe.ts).
const path = require('node:path');
const { HeapRecorder } = require(path.join(__dirname, '..', 'dist', 'record', 'program', 'heap-recorder'));
const { checkHeapOptions } = require(path.join(__dirname, '..', 'dist', 'record', 'settings', 'heap-options'));
const options = checkHeapOptions({ intervalBytes: Number(process.env.BENCH_HEAP_INTERVAL) });
const recorder = new HeapRecorder(options, () => {}, 0);
const stop = recorder.drive(() => recorder.poll(), 1000);
process.on('exit', () => {
  stop();
  recorder.poll();
  recorder.dispose();
});
