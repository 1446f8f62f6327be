// Preload for bench/heap.mjs: at exit, appends the process's own CPU time
// (process.cpuUsage: what the recorder in it cost, not its writer) and wall
// time to $BENCH_HEAP_REPORT. Required last, so that recorders' own exit work
// (a last poll, a profile written in an 'exit' handler) comes before it.
const fs = require('node:fs');
const started = process.hrtime.bigint();
process.on('exit', () => {
  const { user, system } = process.cpuUsage();
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (process.env.BENCH_HEAP_REPORT)
    fs.appendFileSync(process.env.BENCH_HEAP_REPORT, `${JSON.stringify({ cpuMs: (user + system) / 1000, wallMs })}\n`);
});
