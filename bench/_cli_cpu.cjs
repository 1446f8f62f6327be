// Preload for bench/record-start.mjs, in `profpack record`'s own process only (a --require of the CLI's node is
// not passed to the target): at exit, appends the CLI process's own CPU (process.cpuUsage: user + system, its
// Node start included) and how many modules it loaded to $BENCH_CLI_REPORT.
const fs = require('node:fs');
process.on('exit', () => {
  const { user, system } = process.cpuUsage();
  const modules = Object.keys(require.cache).length;
  if (process.env.BENCH_CLI_REPORT)
    fs.appendFileSync(process.env.BENCH_CLI_REPORT, `${JSON.stringify({ cpuMs: (user + system) / 1000, modules })}\n`);
});
