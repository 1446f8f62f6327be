// Preload for bench/heap.mjs: profpack embedded in the program the way a Node service embeds it, and the way
// @datadog/pprof's preload runs: `startRecording({ heap, cpu: false })` into $BENCH_HEAP_OUT, with the writer
// $BENCH_HEAP_WRITER ('inline': a ProfileWriter in the program, no second process, lost on a hard crash;
// 'process': the small writer process fed over a pipe, which keeps the file at an abort). The recording finalizes
// its file when the program exits.
const path = require('node:path');
// $BENCH_HEAP_DIST: another checkout's dist/index.js (bench/heap.mjs's baseline rows).
const { startRecording } = require(process.env.BENCH_HEAP_DIST ?? path.join(__dirname, '..', 'dist', 'index.js'));
startRecording({
  out: process.env.BENCH_HEAP_OUT,
  writer: process.env.BENCH_HEAP_WRITER,
  cpu: false,
  heap: { intervalBytes: Number(process.env.BENCH_HEAP_INTERVAL) },
});
