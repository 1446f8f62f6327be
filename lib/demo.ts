/**
 * `npm run demo`, the README's main job: record the embedded workload
 * (lib/demo/workload.ts) with `profpack record`'s machinery into
 * profile.tach, print what is in it (info) and where the time went (top),
 * and write profile.speedscope.json, profile.pb.gz and flame.html beside it.
 *
 * `node dist/demo.js [DIR] [--ms N] [--slower PART]`: DIR defaults to the
 * current directory; PART (e.g. scanLogs) runs 4 times per round, a
 * regression for `profpack diff` to find.
 */
import { statSync } from 'node:fs';
import * as path from 'node:path';
import { backend } from './backend';
import { infoLines } from './cli/index';
import { convert, openProfile } from './formats/index';
import { aggregate, formatTable } from './query/index';
import { runRecorded } from './record/index';
import { flame } from './view/index';

export interface DemoOptions {
  dir?: string;
  /** How long the workload runs (default 2000 ms). */
  ms?: number;
  /** A workload part (calculatorRound, jsonRound, scanLogs, sortRound) made 4 times slower. */
  slower?: string;
  log?: (line: string) => void;
}

export interface DemoResult {
  profile: string;
  speedscope: string;
  pprof: string;
  flame: string;
  samples: number;
}

function describeProfile(file: string, log: (line: string) => void): number {
  // `profpack info`, then `profpack top`.
  for (const line of infoLines(file)) log(line);
  const src = openProfile(file, { format: 'tachyon' });
  try {
    log('');
    log('top functions (self samples):');
    const top = aggregate(src, { sort: 'self', limit: 12 });
    log(formatTable(top));
    return top.scanned;
  } finally {
    src.close();
  }
}

export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const log = options.log ?? console.log;
  const dir = path.resolve(options.dir ?? '.');
  const profile = path.join(dir, 'profile.tach');
  const ms = options.ms ?? 2000;
  log(`profpack (${backend.name} backend): recording the embedded workload for ${ms} ms of its CPU at 1 kHz …`);
  const workload = path.join(__dirname, 'demo', 'workload.js');
  const run = await runRecorded(
    [process.execPath, workload, String(ms), ...(options.slower === undefined ? [] : [options.slower])],
    { out: profile, intervalUs: 1000, stdio: 'pipe' },
  );
  if (run.code !== 0) throw new Error(`the workload failed (exit ${run.code ?? run.signal})`);
  log('');
  const samples = describeProfile(profile, log);
  const speedscope = path.join(dir, 'profile.speedscope.json');
  const pprof = path.join(dir, 'profile.pb.gz');
  convert(profile, speedscope);
  convert(profile, pprof);
  const page = flame(profile, path.join(dir, 'flame.html'));
  log('');
  log(`wrote ${path.relative(process.cwd(), profile) || profile}, and beside it:`);
  log(
    `  ${path.basename(speedscope)} (${statSync(speedscope).size.toLocaleString('en')} bytes)` +
      `: open it at https://www.speedscope.app`,
  );
  log(
    `  ${path.basename(pprof)} (${statSync(pprof).size.toLocaleString('en')} bytes)` +
      `: go tool pprof -top ${path.basename(pprof)}`,
  );
  log(
    `  ${path.basename(page.output)} (${page.bytes.toLocaleString('en')} bytes)` +
      `: flame graph and timeline, opens offline in a browser: ${page.output}`,
  );
  return { profile, speedscope, pprof, flame: page.output, samples };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const msAt = args.indexOf('--ms');
  const ms = msAt >= 0 ? Number(args[msAt + 1]) : undefined;
  const slowerAt = args.indexOf('--slower');
  const slower = slowerAt >= 0 ? args[slowerAt + 1] : undefined;
  const dir = args.find(
    (a, i) => !a.startsWith('--') && (msAt < 0 || i !== msAt + 1) && (slowerAt < 0 || i !== slowerAt + 1),
  );
  runDemo({ dir, ms, slower }).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
