// Preload for bench/heap.mjs: @datadog/pprof's heap profiler at
// $BENCH_HEAP_INTERVAL bytes, its profile taken and encoded at exit (as an
// agent's export would), written to $BENCH_HEAP_OUT.
const fs = require('node:fs');
const { heap, encodeSync } = require('@datadog/pprof');
heap.start(Number(process.env.BENCH_HEAP_INTERVAL), 64);
process.on('exit', () => fs.writeFileSync(process.env.BENCH_HEAP_OUT, encodeSync(heap.profile())));
