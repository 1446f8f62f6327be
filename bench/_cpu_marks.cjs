// Preload for measuring a recorder's fixed costs (bench/heap-fixed.mjs): this process's CPU since this preload
// (process.cpuUsage; Node's own start, the same for every case, left out) when the module $BENCH_MARK_SCRIPT (a
// path suffix) starts to load, when the first 'exit' listener runs and after the last one, appended as one JSON
// line to $BENCH_MARK_OUT. "setup" is what runs before the program's first line (a CLI, a recorder's start),
// "exit" what the 'exit' listeners cost (a last poll, a file finalized). Load it first (NODE_OPTIONS or the first
// --require).
const fs = require('node:fs');
const Module = require('node:module');

// From here: Node's own start before the preloads is the same for every case.
const start = process.cpuUsage();
const cpuMs = () => {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
};
const marks = {};
const load = Module._load;
Module._load = function (request, ...rest) {
  if (marks.programMs === undefined && String(request).endsWith(process.env.BENCH_MARK_SCRIPT))
    marks.programMs = cpuMs();
  return load.call(this, request, ...rest);
};
process.on('exit', () => (marks.exitMs = cpuMs()));
// After every 'exit' listener, including those registered after this one.
const emit = process.emit;
process.emit = function (event, ...args) {
  const result = emit.call(this, event, ...args);
  if (event === 'exit') {
    const endMs = cpuMs();
    const line = { setupMs: marks.programMs, exitListenersMs: endMs - marks.exitMs, totalMs: endMs };
    fs.appendFileSync(process.env.BENCH_MARK_OUT, `${JSON.stringify(line)}\n`);
  }
  return result;
};
