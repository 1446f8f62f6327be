import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPprof } from '../lib/convert/pprof-read';
import { fromSpeedscope } from '../lib/convert/speedscope';
import { openTachyon } from '../lib/convert/tachyon';
import { compileBuild, type Build } from './convert/build';

let build: Build;
let dir: string;
beforeAll(() => {
  build = compileBuild();
  dir = mkdtempSync(path.join(tmpdir(), 'profpack-demo-'));
});
afterAll(() => {
  build?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the demo main job (npm run demo)', () => {
  it('records the embedded workload, prints info and top, writes speedscope and pprof beside profile.tach', () => {
    const run = spawnSync(process.execPath, [path.join(build.dist, 'demo.js'), '--ms', '800'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const out = run.stdout;
    expect(out).toMatch(/format: +Tachyon version 1, Python 3\.15\.2, little-endian, zstd/);
    expect(out).toMatch(/top functions \(self samples\):\nself\s+self%\s+total\s+total%\s+function/);
    const tach = openTachyon(path.join(dir, 'profile.tach'));
    const samples = [...tach.samples()];
    tach.close();
    expect(samples.length).toBeGreaterThan(100);
    expect(out).toContain(`\n${samples.length} samples\n`);
    // The workload's own functions are what the table shows.
    expect(out).toMatch(/(parseExpression|parseTerm|parseFactor|evaluate|tokenize|jsonRound|scanLogs|sortRound|stringify|parse)\s/);
    const speedscope = fromSpeedscope(JSON.parse(readFileSync(path.join(dir, 'profile.speedscope.json'), 'utf8')));
    expect(speedscope.sampleCount).toBe(samples.length);
    const pprof = fromPprof(readFileSync(path.join(dir, 'profile.pb.gz')));
    expect(pprof.sampleCount).toBe(samples.length);
    expect(statSync(path.join(dir, 'profile.pb.gz')).size).toBeGreaterThan(100);
  });
});
