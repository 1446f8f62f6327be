/**
 * The heap commands in this process (main()), on hand-made heap traces that
 * lib/tachyon's openHeapTrace is mocked to return for small profile files:
 * the wiring from file names to answers, before heap files exist.
 */
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HeapTraceSource } from '../../lib/memory/index';
import { buildProgram } from '../../lib/cli/main';
import { openProfile } from '../../lib/formats/index';
import { aggregate } from '../../lib/query/aggregate';
import { handTrace, leakAndGarbage, writeCpuStandIn, type HandPoll } from './hand-trace';
import { scratchDir } from '../support/scratch-dir';

const traces = new Map<string, () => HeapTraceSource>();
vi.mock('../../lib/tachyon/index', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  openHeapTrace: (file: string) => traces.get(path.basename(file))?.() ?? null,
  heapTraceOfFile: (_bytes: Uint8Array, file: string) => traces.get(path.basename(file))?.() ?? null,
}));

const dir = scratchDir('profpack-heapcli-');

/** A small CPU profile file standing in for a recording; its heap trace is `polls`. */
function recording(name: string, polls: HandPoll[] | null): string {
  const file = path.join(dir, name);
  writeCpuStandIn(file, 1_000_000);
  if (polls !== null) traces.set(name, () => handTrace(4096, polls, 0).trace);
  return file;
}

let out: string[];
beforeEach(() => {
  out = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
});
afterEach(() => vi.restoreAllMocks());

/** Runs a command as main() does, awaiting its action; a user error exits (mocked: throws "exit 2 <its line>"). */
async function run(...args: string[]): Promise<string> {
  out.length = 0;
  const err: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err.push(String(chunk));
    return true;
  });
  vi.spyOn(process, 'exit').mockImplementation(((code: number) => {
    throw new Error(`exit ${code} ${err.join('')}`);
  }) as never);
  const argv = ['node', 'profpack', ...args];
  await buildProgram(argv).parseAsync(argv);
  return out.join('');
}

describe('heap commands', () => {
  const file = recording('service.tach', leakAndGarbage(20));

  it('top: inuse_space by default under --heap, alloc_space on request, --at a moment', async () => {
    const inuse = JSON.parse(await run('top', file, '--heap', '--json'));
    expect(inuse.sampleType).toEqual({ type: 'inuse_space', unit: 'bytes' });
    expect(inuse.rows[0].funcname).toBe('leak');
    expect(inuse.heap).toMatchObject({ at: 'end', atMs: 21_000, peakMs: 20_000, polls: 21 });
    const alloc = JSON.parse(await run('top', file, '--sample-type', 'alloc_space', '--json'));
    expect(alloc.rows[0].funcname).toBe('garbage');
    expect(alloc.rows[0].self).toBeGreaterThan(9 * alloc.rows[1].self);
    // At 5.5 s: five seconds of leak, and the fifth second's garbage not yet freed.
    const early = JSON.parse(await run('top', file, '--at', '4500', '--json'));
    expect(early.rows[0].funcname).toBe('garbage');
    const text = await run('top', file, '--at', 'peak');
    expect(text).toMatch(/inuse_space\/bytes total/);
    // The footer counts what a heap profile's records are: allocation stacks, never "samples".
    expect(inuse.stacks).toBe(inuse.records);
    expect(inuse.stacks).toBeGreaterThan(0);
    expect(inuse).not.toHaveProperty('samples');
    expect(text).toMatch(new RegExp(`^${inuse.stacks} allocation stacks; inuse_space/bytes total`, 'm'));
    expect(text).not.toMatch(/\bsamples\b/);
    expect(text).toMatch(/in use at the peak \(20,000 ms\)/);
  });

  it('leaks: the leak first, growing ~3 KB (scaled) a second with a perfect fit', async () => {
    const report = JSON.parse(await run('leaks', file, '--json'));
    expect(report.suspects[0]).toMatchObject({ funcname: 'leak', lineno: 11 });
    // Twenty polls of steady growth, then one poll that only frees the garbage.
    expect(report.suspects[0].fit).toBeGreaterThan(0.99);
    expect(report.suspects[0].growthBytesPerMin).toBeGreaterThan(60 * 3000);
    expect(report.suspects.find((s: { funcname: string }) => s.funcname === 'garbage')).toBeUndefined();
    expect(await run('leaks', file)).toMatch(/^\s+live\s+peak\s+growth\/min\s+R².*\n.*leak {2}\/app\.js:11\n/);
  });

  it('diff: two moments of one recording, in bytes', async () => {
    const result = JSON.parse(await run('diff', file, '--at', '5000', '--at', 'end', '--json'));
    expect(result.sampleType).toEqual({ type: 'inuse_space', unit: 'bytes' });
    const leak = result.rows.find((r: { funcname: string }) => r.funcname === 'leak');
    expect(leak.selfDelta).toBeGreaterThan(0);
    expect(leak.newSelf / leak.baseSelf).toBeCloseTo(4, 3);
  });

  it('convert --heap: pprof with the four heap types, read back with the same numbers', async () => {
    const pprof = path.join(dir, 'heap.pb.gz');
    await run('convert', file, '--heap', '-o', pprof);
    const back = openProfile(pprof);
    expect(back.meta.sampleTypes.map((t) => t.type)).toEqual([
      'alloc_objects',
      'alloc_space',
      'inuse_objects',
      'inuse_space',
    ]);
    expect(back.meta.periodType).toEqual({ type: 'space', unit: 'bytes' });
    expect(JSON.parse(await run('top', pprof, '--sample-type', 'inuse_space', '--json')).rows[0].funcname).toBe('leak');
  });

  it.each([
    ['heap.heapprofile', 'inuse_space', 'leak'],
    ['heap.speedscope.json', 'inuse_space', 'leak'],
    ['alloc.speedscope.json', 'alloc_space', 'garbage'],
  ])('convert --heap to %s (%s): read back in bytes, %s first', async (name, type, first) => {
    const out = path.join(dir, name);
    await run('convert', file, '--heap', '--sample-type', type, '-o', out);
    const back = openProfile(out);
    expect(back.meta.sampleTypes[back.meta.defaultSampleType]!.unit).toBe('bytes');
    const rows = aggregate(back, { limit: 0 }).rows;
    expect(rows[0]!.funcname).toBe(first);
    back.close();
  });

  it('refuses, with a coded one-line error, a file with no heap events and a moment that is not one', async () => {
    const cpuOnly = recording('cpu-only.tach', null);
    await expect(run('leaks', cpuOnly)).rejects.toThrow(
      /^exit 2 profpack: ERR_INVALID_ARGUMENT: .*cpu-only.tach: no heap events \(record with --heap\)\n$/,
    );
    await expect(run('top', file, '--at', 'later')).rejects.toThrow(
      /^exit 2 profpack: ERR_INVALID_ARGUMENT: --at must be peak, end or ms/,
    );
    await expect(run('diff', file, '--at', '5')).rejects.toThrow(
      /^exit 2 profpack: ERR_INVALID_ARGUMENT: two moments of one heap recording/,
    );
  });
});
