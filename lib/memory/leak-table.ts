/**
 * The leak report as text (`profpack leaks`): one row per suspect with its
 * evidence, a site freed before the end with its run, and a footer saying
 * what the recording could and could not tell.
 */
import type { LeakReport } from './leaks';

/** The report as text: one row per suspect, evidence beside it; a site freed before the end shows its run. */
export function formatLeakTable(report: LeakReport, unitBytes: (v: number) => string): string {
  const header = ['live', 'peak', 'growth/min', 'R²', 'allocated', 'freed', 'site'];
  const rows = report.suspects.map((s) => {
    const freed = s.run.freedAtMs !== null;
    const growth = freed ? s.run.growthBytesPerMin : s.growthBytesPerMin;
    const where = s.filename === '' ? '' : `  ${s.filename}${s.lineno === null ? '' : `:${s.lineno}`}`;
    const leaf = s.leaf === null ? '' : `  (allocated in ${s.leaf})`;
    const thread = report.threads > 1 ? `  [thread ${s.threadId}]` : '';
    const note = freed
      ? `  — grew ${signed(unitBytes, s.run.growthBytesPerMin)}/min for ` +
        `${((s.run.peakMs - s.firstAllocMs) / 1000).toFixed(1)} s, freed ` +
        (s.run.freedAtExit ? 'at exit' : 'at') +
        (s.run.freedAtMs === report.durationMs ? '' : ` ${(s.run.freedAtMs! / 1000).toFixed(1)} s`)
      : s.stoppedGrowing
        ? `  — no allocation since ${(s.lastAllocMs / 1000).toFixed(1)} s ` +
          `of ${(report.durationMs / 1000).toFixed(1)} s: stopped growing`
        : '';
    return [
      unitBytes(s.liveBytes),
      unitBytes(s.run.peakBytes),
      signed(unitBytes, growth),
      (freed ? s.run.fit : s.fit).toFixed(2),
      unitBytes(s.allocatedBytes),
      unitBytes(s.freedBytes),
      `${s.funcname}${where}${thread}${leaf}${note}`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padStart(widths[i]!))).join('  ');
  const foot = [
    `${report.polls} polls over ${(report.durationMs / 1000).toFixed(1)} s; ` +
      `${unitBytes(report.liveBytes)} live at the end (sampled every ${unitBytes(report.intervalBytes)}, scaled)`,
  ];
  if (report.freedBeforeEnd > 0)
    foot.push(
      `the end differs from the run: ${report.freedBeforeEnd} site(s) grew steadily and were freed before the ` +
        'end (a teardown); their growth and R² are over their run, up to their peak',
    );
  if (report.noGcSeen)
    foot.push(
      'no object was freed before the last poll (no GC seen): growth that the end freed cannot be told from ' +
        'garbage not yet collected, so only what is live at the end is judged',
    );
  return [line(header), ...rows.map(line), ...foot].join('\n');
}

function signed(unitBytes: (v: number) => string, v: number): string {
  return `${v >= 0 ? '+' : ''}${unitBytes(v)}`;
}
