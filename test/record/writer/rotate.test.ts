// test tier: slow (rotating recordings with both writers, ~19 s)
/**
 * Rotation: a recording split into files every interval loses no sample and
 * writes none twice (overlapping harvests included), each file is final, and
 * `keep` bounds the files left on disk; with both writers ('inline' and the
 * writer process) and the CLI's host.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CpuProfile } from '../../../lib/v8/index';
import { openProfile } from '../../../lib/formats/index';
import { samplesOf } from '../../support/model';
import { ErrorCode } from '../../../lib/errors';
import { RecordingHost } from '../../../lib/record/writer/index';
import { HarvestEncoder } from '../../../lib/record/wire/index';
import { checkRotate, parseDuration, type RotatedFileStats } from '../../../lib/record/settings/index';
import { compileBuild, type Build } from '../../support/build';
import { thrown } from '../../support/refusals';
import { scratchDir } from '../../support/scratch-dir';

const work = scratchDir('profpack-rotate-');

/** A V8 chunk: samples on a two-function tree at the given absolute times (µs). */
function chunk(times: number[], leaves: number[]): CpuProfile {
  const cf = (functionName: string, lineNumber: number) => ({
    functionName,
    scriptId: '1',
    url: 'file:///app.js',
    lineNumber,
    columnNumber: 0,
  });
  const deltas = times.map((t, i) => t - (i === 0 ? times[0]! : times[i - 1]!));
  return {
    nodes: [
      { id: 1, callFrame: { ...cf('(root)', -1), url: '' }, children: [2] },
      { id: 2, callFrame: cf('main', 0), children: [3, 4] },
      { id: 3, callFrame: cf('parse', 10) },
      { id: 4, callFrame: cf('emit', 20) },
    ],
    startTime: times[0]!,
    endTime: times.at(-1)!,
    samples: leaves,
    timeDeltas: deltas,
  };
}

/**
 * Every sample of the files: "thread leaf-function", once per sample. A record
 * may be a REPEAT run (its samples/count value), and a run that a rotation cut
 * reads as two records: samples, not records, are what files must agree on.
 */
function readAll(files: string[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    const src = openProfile(f, { format: 'tachyon' });
    for (const s of samplesOf(src))
      for (let k = 0; k < s.values[0]!; k++) out.push(`${s.threadId} ${src.frames[s.stack[0]!]!.funcname}`);
    src.close();
  }
  return out;
}

describe('RecordingHost rotation', () => {
  it('every sample lands in exactly one file, whatever the rotation points (overlapping harvests too)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            count: fc.integer({ min: 1, max: 20 }),
            overlap: fc.integer({ min: 0, max: 3 }),
            rotateAfter: fc.boolean(),
            thread: fc.constantFrom(0, 1),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        (harvests) => {
          const dir = mkdtempSync(path.join(work, 'prop-'));
          const encoder = new HarvestEncoder();
          const plain = new RecordingHost({ out: path.join(dir, 'plain.tach'), intervalUs: 1000, startTimeUs: 0n });
          const rotating = new RecordingHost({
            out: 'unused',
            intervalUs: 1000,
            startTimeUs: 0n,
            rotate: { everyMs: 1e9, dir: path.join(dir, 'r') },
          });
          const files: string[] = [];
          const next = [1000, 1000];
          for (const h of harvests) {
            // A harvest repeats the last `overlap` ticks of its thread's previous one, as V8's overlapping profiles do.
            const start = Math.max(1000, next[h.thread]! - h.overlap * 10);
            const times = Array.from({ length: h.count + h.overlap }, (_, i) => start + i * 10);
            next[h.thread] = times.at(-1)! + 10;
            const c = chunk(
              times,
              times.map((t) => (t % 20 === 0 ? 3 : 4)),
            );
            // One sender, two writers: the harvest is encoded once.
            const wire = encoder.encode(c, h.thread);
            if (wire !== undefined) plain.ingestChunk(wire, h.thread, h.thread === 0);
            if (wire !== undefined) rotating.ingestChunk(wire, h.thread, h.thread === 0);
            if (h.rotateAfter) {
              const done = rotating.rotate();
              if (done !== undefined) files.push(done.path);
            }
          }
          plain.finish();
          rotating.finish();
          files.push(rotating.lastFile!.path);
          expect(readAll(files).sort()).toEqual(readAll([path.join(dir, 'plain.tach')]).sort());
          expect(rotating.samples).toBe(plain.samples);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('keeps at most `keep` finished files, deleting the oldest', () => {
    const dir = path.join(work, 'keep');
    const host = new RecordingHost({
      out: 'unused',
      intervalUs: 1000,
      startTimeUs: 0n,
      rotate: { everyMs: 1e9, dir, keep: 2 },
    });
    const done: string[] = [];
    const encoder = new HarvestEncoder();
    for (let i = 0; i < 5; i++) {
      host.ingestChunk(encoder.encode(chunk([1000 + i * 100, 1010 + i * 100], [3, 4]), 0)!, 0, true);
      done.push(host.rotate()!.path);
    }
    host.ingestChunk(encoder.encode(chunk([2000], [3]), 0)!, 0, true);
    host.finish();
    done.push(host.lastFile!.path);
    expect(
      readdirSync(dir)
        .map((f) => path.join(dir, f))
        .sort(),
    ).toEqual(done.slice(-2));
    // No sample since the last rotation: no empty file.
    const idle = new RecordingHost({
      out: 'unused',
      intervalUs: 1000,
      rotate: { everyMs: 1e9, dir: path.join(work, 'idle') },
    });
    expect(idle.rotate()).toBeUndefined();
    idle.finish();
  });

  it('refuses bad rotation options with ERR_INVALID_ARGUMENT', () => {
    for (const bad of [
      { everyMs: 0, dir: 'd' },
      { everyMs: 10, dir: '' },
      { everyMs: 10, dir: 'd', keep: 0 },
      { everyMs: 10, dir: 'd', keep: 1.5 },
      { everyMs: 10, dir: 'd', prefix: '../x' },
    ]) {
      expect(thrown(() => checkRotate(bad)).code).toBe(ErrorCode.INVALID_ARGUMENT);
    }
    expect(parseDuration('60s')).toBe(60_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(thrown(() => parseDuration('soon')).code).toBe(ErrorCode.INVALID_ARGUMENT);
  });
});

describe('startRecording({ rotate }) and profpack record --rotate', () => {
  let build: Build;
  beforeAll(() => {
    build = compileBuild();
  });
  afterAll(() => build?.cleanup());

  it('profpack record --rotate --dir --keep: a line per file, `keep` files left, their samples add up', () => {
    const dir = path.join(work, 'cli');
    const app = path.join(work, 'app.js');
    writeFileSync(
      app,
      'const end = Date.now() + 1200; let x = 0; (function step() { for (let i = 0; i < 50000; i++) x += Math.sqrt(i); if (Date.now() < end) setImmediate(step); })();',
    );
    const run = spawnSync(
      process.execPath,
      [
        build.cli,
        'record',
        '--rotate',
        '150ms',
        '--dir',
        dir,
        '--keep',
        '2',
        '--harvest-ms',
        '20',
        '--',
        process.execPath,
        app,
      ],
      { encoding: 'utf8', cwd: work, timeout: 60_000 },
    );
    expect(run.status).toBe(0);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    const written = lines.map((l) => /^profpack: wrote (\S+): ([\d,]+) samples/.exec(l)!);
    expect(written.every((m) => m !== null)).toBe(true);
    const kept = written.slice(-2).map((m) => path.resolve(work, m[1]!));
    expect(
      readdirSync(dir)
        .map((f) => path.join(dir, f))
        .sort(),
    ).toEqual(kept);
    expect(readAll(kept).length).toBe(written.slice(-2).reduce((a, m) => a + Number(m[2]!.replaceAll(',', '')), 0));
    const bad = spawnSync(process.execPath, [build.cli, 'record', '--rotate', 'soon', '--', process.execPath, app], {
      encoding: 'utf8',
      cwd: work,
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^profpack: ERR_INVALID_ARGUMENT: /);
  });

  it.each(['inline', 'process'] as const)(
    'writer %s: onFile with each finished file, no sample lost, `keep` files left',
    (writer) => {
      const dir = path.join(work, `rec-${writer}`);
      // The recorded program: JS on the stack with the event loop turning, so harvests and rotations run, until five
      // files are finished (on a loaded machine a fixed 1.2 s of wall time gave one): keep: 3 has files to delete.
      const script = path.join(work, `rotate-${writer}.js`);
      writeFileSync(
        script,
        `const files = [];
const rec = require(${JSON.stringify(path.join(build.dist, 'record', 'index.js'))}).startRecording({ writer: '${writer}', harvestMs: 20, rotate: { everyMs: 150, dir: ${JSON.stringify(dir)}, keep: 3 }, onFile: (file, stats) => files.push({ file, stats }) });
const end = Date.now() + 45000;
let x = 0;
(function step() {
  for (let i = 0; i < 50000; i++) x += Math.sqrt(i);
  if (files.length < 5 && Date.now() < end) return setImmediate(step);
  const summary = rec.stop();
  console.log(JSON.stringify({ files, summary }));
})();`,
      );
      const run = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 60_000 });
      expect(run.status).toBe(0);
      const { files, summary } = JSON.parse(run.stdout) as {
        files: { file: string; stats: RotatedFileStats }[];
        summary: { out: string; samples: number };
      };
      expect(files.length).toBeGreaterThanOrEqual(5);
      expect(files.map((f) => f.stats.index)).toEqual(files.map((_, i) => i));
      expect(summary.out).toBe(files.at(-1)!.file);
      // Every sample is in exactly one file: the files' counts add up to the recording's.
      expect(files.reduce((a, f) => a + f.stats.samples, 0)).toBe(summary.samples);
      const kept = files.slice(-3);
      expect(
        readdirSync(dir)
          .map((f) => path.join(dir, f))
          .sort(),
      ).toEqual(kept.map((f) => f.file));
      for (const f of files.slice(0, -3)) expect(existsSync(f.file)).toBe(false);
      // Kept files are final, hold what onFile said, and follow each other in time without a repeat.
      let previous = -1n;
      for (const f of kept) {
        const src = openProfile(f.file, { format: 'tachyon' });
        let n = 0;
        for (const s of samplesOf(src)) {
          expect(s.timestampUs).toBeGreaterThan(previous);
          previous = s.timestampUs;
          n += s.values[0]!;
        }
        src.close();
        expect(n).toBe(f.stats.samples);
      }
    },
  );
});
