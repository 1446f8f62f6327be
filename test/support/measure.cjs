// Preloaded (--require) into a child whose cost a test judges: at exit it
// writes the process's own peak RSS and CPU time to PROFPACK_MEASURE_FILE.
// CPU time, not wall time: a loaded machine stretches the wall clock only.
'use strict';
const fs = require('node:fs');
const file = process.env.PROFPACK_MEASURE_FILE;
if (file) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    fs.writeFileSync(file, JSON.stringify({ maxRssBytes: u.maxRSS * 1024, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000 }));
  });
}
