// Preloaded into a CLI run (node --require): writes the process's peak RSS
// (KiB, from getrusage) to $PROFPACK_RSS_REPORT when it exits, however it exits.
'use strict';
process.on('exit', () =>
  require('node:fs').writeFileSync(process.env.PROFPACK_RSS_REPORT, String(process.resourceUsage().maxRSS)),
);
