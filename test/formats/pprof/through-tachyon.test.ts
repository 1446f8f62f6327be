// test tier: slow (every real pprof profile through Tachyon against go tool pprof, ~21 s)
/**
 * pprof → profpack → pprof through a file of profpack's own (Tachyon
 * version 2, the format that carries the model): every real Go and Datadog
 * profile comes back with the same sample types, units, default type, period,
 * values per stack and labels, as `go tool pprof -raw` and `-tags` show them.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildForTests } from '../../support/build';
import { goPprof } from '../../support/outside-tools';
import { outsideDir, pprofFixtures, rawView, tagsView } from './support';

describe('pprof → Tachyon version 2 → pprof, checked by go tool pprof', () => {
  const { build, dir: work } = buildForTests('profpack-pprof-v2-');

  const cli = (...args: string[]) => spawnSync(process.execPath, [build.cli, ...args], { encoding: 'utf8', cwd: work });

  it.each(pprofFixtures)('%s', (fixture) => {
    const input = path.join(outsideDir, fixture);
    const tach = path.join(work, `${path.basename(fixture)}.tach`);
    const back = path.join(work, `${path.basename(fixture)}.back.pb.gz`);
    const toTach = cli('convert', input, '--tachyon-version', '2', '-o', tach, '-q');
    expect(toTach.stderr).toBe('');
    expect(toTach.status).toBe(0);
    const toPprof = cli('convert', tach, '-o', back, '-q');
    expect(toPprof.status, toPprof.stderr).toBe(0);
    const before = rawView(input);
    const after = rawView(back);
    expect(after.header).toEqual(before.header);
    // Version 2 keeps each sample's time, not which label carried it: Datadog's end_timestamp_ns
    // comes back as profpack's timestamp_us, the same instant (the model keeps µs).
    const sameTime = (line: string) => line.replace(/end_timestamp_ns:\[(\d+)000\]/, 'timestamp_us:[$1 microseconds]');
    expect(after.samples.map(sameTime).sort()).toEqual(before.samples.map(sameTime).sort());
    const TIME_KEYS = ['end_timestamp_ns', 'timestamp_us'];
    expect(tagsView(back, TIME_KEYS)).toBe(tagsView(input, TIME_KEYS));
    // The default type is go tool pprof's first -top line ("Type: …") on both sides.
    const type = (file: string) => /^Type: (.*)$/m.exec(goPprof(['-top', '-nodecount=1', file]))?.[1];
    expect(type(back)).toBe(type(input));
  });

  it('version 1 refuses a weighted profile, naming version 2, and writes nothing', () => {
    const out = path.join(work, 'heap-v1.tach');
    const run = cli('convert', path.join(outsideDir, 'go', 'go.heap.pb.gz'), '-o', out);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^profpack: ERR_TACHYON_V1_WEIGHTED: .*version 2/);
    expect(spawnSync('test', ['-e', out]).status).toBe(1);
  });
});
