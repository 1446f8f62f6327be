// Shared benchmark helpers: interleaved rounds and medians, so that a noisy,
// shared machine slows the candidate and its baseline alike.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Runs every case once per round, in rotating order, for `rounds` rounds, and
 * returns every round's seconds per case. `cases` maps a name to a function
 * that does one unit of work (call it enough times inside to last ~10-100 ms).
 * On a loaded machine a ratio is steadier as the median of per-round ratios
 * (candidate and baseline ran moments apart) than as a ratio of medians.
 */
export function interleaveRounds(cases, { rounds = 15, warmup = 2 } = {}) {
  const timed = Object.fromEntries(
    Object.entries(cases).map(([name, fn]) => [
      name,
      () => {
        globalThis.gc?.();
        const t0 = process.hrtime.bigint();
        fn();
        return Number(process.hrtime.bigint() - t0) / 1e9;
      },
    ]),
  );
  const times = rotateRounds(timed, warmup + rounds);
  return Object.fromEntries(Object.entries(times).map(([name, t]) => [name, t.slice(warmup)]));
}

/**
 * The rotation itself, for cases that measure themselves (a child process's CPU, a timed loop): each returns its
 * number, every round's numbers are kept per case; `afterRound` runs after each round (a load average, a log line).
 */
export function rotateRounds(cases, rounds, afterRound = () => {}) {
  const names = Object.keys(cases);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r) % names.length];
      times[name].push(cases[name]());
    }
    afterRound(r);
  }
  return times;
}

/** interleaveRounds(), reduced to the median seconds of each case. */
export function interleave(cases, options) {
  const times = interleaveRounds(cases, options);
  return Object.fromEntries(Object.keys(times).map((n) => [n, median(times[n])]));
}

export function machine() {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ${os.platform()} ${os.arch()}`;
}

/**
 * Puts `section` into bench/RESULTS.md in place of the section under the same heading (its first line), or
 * appends it: each bench rewrites only its own section.
 */
export function writeResultsSection(section) {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), 'RESULTS.md');
  const heading = section.slice(0, section.indexOf('\n'));
  const current = readFileSync(file, 'utf8');
  const start = current.indexOf(`\n${heading}\n`);
  const next = start < 0 ? -1 : current.indexOf('\n## ', start + 1);
  const updated =
    start < 0
      ? current.trimEnd() + '\n\n' + section
      : current.slice(0, start + 1) + section + (next < 0 ? '' : current.slice(next));
  writeFileSync(file, updated.endsWith('\n') ? updated : updated + '\n');
}

export function table(header, rows) {
  const lines = [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/**
 * The real program no one here wrote, as the heap and record-start benches run it: `tsc --noEmit --strict` over
 * lib/record/program/heap-recorder.ts and what it imports (most of the work is lib.es2023 and @types/node).
 */
export function tscWorkloadArgs(repo) {
  return [
    path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc'),
    ...'--noEmit --strict --skipLibCheck --lib es2023 --target es2022 --module commonjs'.split(' '),
    ...'--moduleResolution node --esModuleInterop --types node'.split(' '),
    path.join(repo, 'lib', 'types', 'node-gyp-build.d.ts'),
    path.join(repo, 'lib', 'record', 'program', 'heap-recorder.ts'),
  ];
}
