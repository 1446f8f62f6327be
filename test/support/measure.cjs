// Preloaded (--require) into a child whose cost a test judges: at exit it
// writes the process's own peak RSS and CPU time to PROFPACK_MEASURE_FILE.
// CPU time, not wall time: a loaded machine stretches the wall clock only.
'use strict';
const fs = require('node:fs');
const file = process.env.PROFPACK_MEASURE_FILE;
// Linux's getrusage maxrss survives exec: a child forked from a large test worker reports the
// worker's RSS. VmHWM is the peak of this process's own memory since exec.
function peakRssBytes(usage) {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (hwm) return Number(hwm[1]) * 1024;
  } catch {
    // no /proc (macOS, Windows): rusage, which there starts at exec
  }
  return usage.maxRSS * 1024;
}
if (file) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    fs.writeFileSync(
      file,
      JSON.stringify({ maxRssBytes: peakRssBytes(u), cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000 }),
    );
  });
}
