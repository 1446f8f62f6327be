// test tier: slow (eleven recordings of short programs, ~40 s)
/**
 * The recorder's own allocations are not the program's (issue 37, "every number true"): with the inline writer the
 * file is written in the recorded program, and its periodic flush (encoding, zstd, the journal's checkpoint), its
 * rotation and the launch's last steps allocate there while the heap is sampled. A program whose allocations are
 * known (makeRows, keepRows) is recorded with a flush every 5 ms and a 1 KiB heap interval, so that hundreds of
 * flushes each allocate several samples' worth; no sampled allocation of the file may have a frame of profpack's own
 * files, and the program's sites must all be there. Recording profpack's own CLI keeps its frames: the own-code rule
 * is the recorder's folder (lib/record/program), never all of profpack.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openHeapTrace } from '../../../../lib/tachyon/index';
import { repoRoot } from '../../../support/environment';
import { scratchDir } from '../../../support/scratch-dir';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dir = scratchDir('profpack-own-alloc-');
const INTERVAL = 1024;
const FLUSH_MS = 5;

// 300 turns of the event loop, each keeping 40 small objects (the last 100 turns' kept): flush timers fire between.
const program = path.join(dir, 'rows.js');
fs.writeFileSync(
  program,
  [
    'globalThis.kept = [];',
    'function makeRows(step) {',
    '  const rows = [];',
    "  for (let i = 0; i < 40; i++) rows.push({ step, i, label: 'row ' + step + ' ' + i });",
    '  return rows;',
    '}',
    'function keepRows(rows) { kept.push(rows.slice()); if (kept.length > 100) kept.shift(); }',
    'let step = 0;',
    '(function loop() { keepRows(makeRows(step)); if (++step < 300) setTimeout(loop, 2); })();',
    '',
  ].join('\n'),
);

// The same program with the recording embedded: startRecording's inline writer, one file or rotating ones.
const embedded = path.join(dir, 'embedded.js');
fs.writeFileSync(
  embedded,
  [
    `const { startRecording } = require(${JSON.stringify(path.join(repoRoot, 'dist', 'index.js'))});`,
    'const [out, rotateDir] = process.argv.slice(2);',
    'startRecording({',
    "  writer: 'inline', out, cpu: false, flushIntervalMs: Number(process.env.FLUSH_MS),",
    '  heap: { intervalBytes: Number(process.env.INTERVAL), polls: "harvest" }, harvestMs: 50,',
    '  ...(rotateDir ? { rotate: { everyMs: 100, dir: rotateDir } } : {}),',
    '});',
    `require(${JSON.stringify(program)});`,
    '',
  ].join('\n'),
);

const run = (args: string[], env: NodeJS.ProcessEnv): SpawnSyncReturns<string> =>
  spawnSync(process.execPath, args, { encoding: 'utf8', cwd: dir, env: { ...process.env, ...env }, timeout: 120_000 });

/** Paths of profpack's own code as a frame may name them (plain or as a file URL). */
const profpackPrefixes = ['dist', 'lib'].flatMap((sub) => {
  const p = path.join(repoRoot, sub) + path.sep;
  return [p, pathToFileURL(p).href];
});
const isProfpackFile = (filename: string): boolean => profpackPrefixes.some((p) => filename.startsWith(p));
const relative = (filename: string): string =>
  path.relative(repoRoot, filename.startsWith('file:') ? new URL(filename).pathname : filename);

interface Allocations {
  total: number;
  /** Sampled allocations with a frame of profpack's own files, each as its stack (innermost first), a few. */
  profpack: string[];
  profpackCount: number;
  /** Sampled allocations per function of the program. */
  bySite: Map<string, number>;
  /** Sampled allocations per file of profpack's own on their stack (relative to the checkout). */
  byProfpackFile: Map<string, number>;
}

/** Every sampled allocation of the files (V8's and external ones), read back by the reader. */
function allocations(files: string[]): Allocations {
  const found: Allocations = { total: 0, profpack: [], profpackCount: 0, bySite: new Map(), byProfpackFile: new Map() };
  for (const file of files) {
    const trace = openHeapTrace(file);
    expect(trace, file).not.toBeNull();
    for (const batch of trace!.events()) {
      if (batch.kind === 'free') continue;
      for (const stackId of batch.stackIds) {
        found.total++;
        if (stackId === 0xffffffff) continue;
        const frames = trace!.stacks.toArray(stackId).map((f) => trace!.frames[f]!);
        if (frames.some((f) => isProfpackFile(f.filename))) {
          found.profpackCount++;
          if (found.profpack.length < 5)
            found.profpack.push(frames.map((f) => `${f.funcname} ${f.filename}`).join(' < '));
        }
        for (const name of new Set(frames.map((f) => f.funcname)))
          found.bySite.set(name, (found.bySite.get(name) ?? 0) + 1);
        const own = frames.filter((f) => isProfpackFile(f.filename)).map((f) => relative(f.filename));
        for (const file of new Set(own)) found.byProfpackFile.set(file, (found.byProfpackFile.get(file) ?? 0) + 1);
      }
    }
    trace!.close?.();
  }
  return found;
}

function expectOnlyTheProgram(found: Allocations): void {
  expect(found.profpack, `${found.profpackCount} of ${found.total} sampled allocations`).toEqual([]);
  // 300 × 40 objects of ~50 bytes and their strings, at 1 KiB: hundreds each; a floor far below that.
  for (const site of ['makeRows', 'keepRows']) expect(found.bySite.get(site) ?? 0, site).toBeGreaterThan(20);
}

describe.each(['native', 'inspector'] as const)('the inline writer, %s heap sampler', (sampler) => {
  const env = { PROFPACK_HEAP_SAMPLER: sampler, FLUSH_MS: String(FLUSH_MS), INTERVAL: String(INTERVAL) };
  const record = ['record', '--inline', '--heap', '--no-cpu', '--heap-interval', String(INTERVAL)];
  record.push('--heap-polls', 'harvest', '--harvest-ms', '50', '--flush-ms', String(FLUSH_MS));

  it('record --inline, the program in record’s own process: none of profpack’s allocations', () => {
    const out = path.join(dir, `in-process-${sampler}.tach`);
    const rec = run([cli, ...record, '-o', out, '--', process.execPath, program], env);
    expect(rec.status, rec.stderr).toBe(0);
    expectOnlyTheProgram(allocations([out]));
  });

  it('record --inline, the program in a process of its own (the preload): none of profpack’s allocations', () => {
    const out = path.join(dir, `preload-${sampler}.tach`);
    const rec = run([cli, ...record, '-o', out, '--', process.execPath, '--no-deprecation', program], env);
    expect(rec.status, rec.stderr).toBe(0);
    expectOnlyTheProgram(allocations([out]));
  });

  it('startRecording inline: none of profpack’s allocations', () => {
    const out = path.join(dir, `embedded-${sampler}.tach`);
    const rec = run([embedded, out], env);
    expect(rec.status, rec.stderr).toBe(0);
    expectOnlyTheProgram(allocations([out]));
  });

  it('startRecording inline, rotating: none of profpack’s allocations in any file', () => {
    const rotated = path.join(dir, `rotated-${sampler}`);
    const rec = run([embedded, 'unused.tach', rotated], env);
    expect(rec.status, rec.stderr).toBe(0);
    const files = fs.readdirSync(rotated).filter((f) => f.endsWith('.tach'));
    // ~0.6 s of program in 100 ms files.
    expect(files.length).toBeGreaterThan(1);
    expectOnlyTheProgram(allocations(files.map((f) => path.join(rotated, f))));
  });
});

describe('recording profpack’s own CLI', () => {
  it('keeps its frames: only the recorder’s folder is left out, not profpack', () => {
    // A pprof file to convert: this very program's heap, recorded without the heap first.
    const input = path.join(dir, 'self-input.tach');
    const first = run([cli, 'record', '-o', input, '--', process.execPath, program], {});
    expect(first.status, first.stderr).toBe(0);
    const out = path.join(dir, 'self.tach');
    const args = [cli, 'record', '--inline', '--heap', '--no-cpu', '--heap-interval', String(INTERVAL), '--flush-ms'];
    args.push(String(FLUSH_MS), '-o', out, '--', process.execPath, '--no-deprecation', cli, 'convert', input);
    args.push('-o', path.join(dir, 'self.pb.gz'), '-q');
    const rec = run(args, {});
    expect(rec.status, rec.stderr).toBe(0);
    const { byProfpackFile } = allocations([out]);
    const seen = [...byProfpackFile].map(([file, n]) => `${file} ${n}`).join(', ');
    // The converter's own sites are the program's: its command, reading the Tachyon file, writing pprof.
    const sampledUnder = (folder: string): number =>
      [...byProfpackFile].filter(([file]) => file.includes(folder)).reduce((a, [, n]) => a + n, 0);
    for (const folder of ['cli/', 'tachyon/read/', 'formats/pprof/'])
      expect(sampledUnder(path.join('lib', folder)), `${folder}: ${seen}`).toBeGreaterThan(0);
    // And the recorder's own are not.
    expect(sampledUnder(path.join('lib', 'record', 'program')), seen).toBe(0);
  });
});
