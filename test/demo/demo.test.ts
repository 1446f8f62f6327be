import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProfile } from '../../lib/formats/index';
import { samplesOf } from '../support/model';
import { aggregate } from '../../lib/query/aggregate';
import { compileBuild, type Build } from '../support/build';
import { SLOWDOWN } from '../support/environment';
import { launch, openPage } from '../view/browser';

// Under emulation the workload runs ~10x slower: record longer for as many rounds (and a clear diff).
const DEMO_MS = String(800 * SLOWDOWN);

let build: Build;
let dir: string;
let browser: Browser;
beforeAll(async () => {
  build = compileBuild();
  dir = mkdtempSync(path.join(tmpdir(), 'profpack-demo-'));
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  build?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the demo main job (npm run demo)', () => {
  it('records the embedded workload, prints info and top, writes speedscope, pprof and flame.html beside profile.tach', async () => {
    const run = spawnSync(process.execPath, [path.join(build.dist, 'demo.js'), '--ms', DEMO_MS], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000 * SLOWDOWN,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const out = run.stdout;
    // A Node recording says what recorded it, not a Python version (issue 28).
    expect(out).toMatch(/format: +Tachyon version 1, little-endian, zstd/);
    expect(out).not.toMatch(/Python/);
    expect(out).toMatch(/top functions \(self samples\):\nself\s+self%\s+total\s+total%\s+function/);
    const tach = openProfile(path.join(dir, 'profile.tach'), { format: 'tachyon' });
    const samples = [...samplesOf(tach)];
    tach.close();
    // A record may be a REPEAT run: the samples are the samples/count column's sum.
    const ticks = samples.reduce((sum, s) => sum + s.values[0]!, 0);
    expect(ticks).toBeGreaterThan(100);
    expect(out).toContain(`\n${ticks} samples; samples/count total ${ticks}\n`);
    // The workload's own functions are what the table shows.
    expect(out).toMatch(
      /(parseExpression|parseTerm|parseFactor|evaluate|tokenize|jsonRound|scanLogs|sortRound|stringify|parse)\s/,
    );
    // Both outputs hold the recording: every sample once, and its real time.
    const wall = samples.reduce((sum, s) => sum + s.values[1]!, 0);
    const pprof = openProfile(path.join(dir, 'profile.pb.gz'));
    expect(aggregate(pprof, { sampleType: 'samples' }).total).toBe(ticks);
    expect(aggregate(pprof).total).toBe(Math.round(wall)); // its default: the real time, as go tool pprof shows it
    pprof.close();
    // speedscope's axis is the recording's real time.
    const speedscope = openProfile(path.join(dir, 'profile.speedscope.json'));
    expect(aggregate(speedscope).total).toBe(Math.round(wall));
    speedscope.close();
    expect(wall).toBeGreaterThan(0);
    expect(statSync(path.join(dir, 'profile.pb.gz')).size).toBeGreaterThan(100);

    // flame.html beside the profile, its path printed; offline in Chromium it shows the workload's hot functions.
    const page = path.join(dir, 'flame.html');
    expect(out).toContain(page);
    const opened = await openPage(browser, page);
    const again = openProfile(path.join(dir, 'profile.tach'), { format: 'tachyon' });
    const hot = aggregate(again, { limit: 0 })
      .rows.filter((r) => r.filename.endsWith('workload.js') && r.funcname !== '')
      .slice(0, 4);
    again.close();
    expect(hot.length).toBeGreaterThan(1);
    for (const r of hot)
      expect(await opened.page.locator(`#chart g.frame[name="${r.funcname}"]`).count()).toBeGreaterThan(0);
    expect(opened.problems).toEqual([]);
    await opened.page.close();
  });

  it("a second recording with scanLogs made 4x slower: profpack diff --normalize shows scanLogs red, the workload's top growth", async () => {
    const slow = path.join(dir, 'slow');
    mkdirSync(slow);
    const base = path.join(dir, 'profile.tach');
    if (!existsSync(base))
      spawnSync(process.execPath, [path.join(build.dist, 'demo.js'), '--ms', DEMO_MS], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 120_000 * SLOWDOWN,
      });
    const run = spawnSync(
      process.execPath,
      [path.join(build.dist, 'demo.js'), slow, '--ms', DEMO_MS, '--slower', 'scanLogs'],
      { cwd: dir, encoding: 'utf8', timeout: 120_000 * SLOWDOWN },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const html = path.join(dir, 'diff.html');
    const diff = spawnSync(
      process.execPath,
      [build.cli, 'diff', base, path.join(slow, 'profile.tach'), '--normalize', '-o', html, '--json'],
      { encoding: 'utf8', timeout: 120_000 * SLOWDOWN },
    );
    expect(diff.stderr).toBe('');
    expect(diff.status).toBe(0);
    const result = JSON.parse(diff.stdout) as {
      rows: { funcname: string; filename: string; selfDelta: number; totalDelta: number }[];
    };
    // Of the workload's own functions, scanLogs grew most ((garbage collector) may grow too: scanLogs allocates).
    const own = result.rows
      .filter((r) => r.filename.endsWith('workload.js'))
      .sort((a, b) => b.totalDelta - a.totalDelta);
    expect(own[0]!.funcname).toBe('scanLogs');
    expect(own[0]!.totalDelta).toBeGreaterThan(0);
    const opened = await openPage(browser, html);
    const rows = await opened.page.$$eval('#functions tbody tr', (trs) =>
      trs.map((tr) => ({
        name: (tr as HTMLElement).dataset.name,
        file: (tr as HTMLElement).dataset.file!,
        cls: tr.className,
      })),
    );
    const firstOwnGrowth = rows.find((r) => r.file.endsWith('workload.js') && r.cls === 'grew');
    expect(firstOwnGrowth?.name).toBe('scanLogs');
    // The scanLogs frame is drawn red (grew): red channel full, green and blue lower. How much lower is its
    // growth over the largest change in the tree, which a loaded machine can make another frame's (CI: rgb(235,233,233)).
    const fill = await opened.page.$eval('#chart g.frame[name="scanLogs"] rect', (r) => r.getAttribute('fill')!);
    const [red, green, blue] = /rgb\((\d+),(\d+),(\d+)\)/.exec(fill)!.slice(1).map(Number);
    expect(red).toBe(235);
    expect(green).toBeLessThan(235);
    expect(blue).toBe(green);
    await opened.page.screenshot({
      path: path.join(process.env.PROFPACK_VIEW_SHOTS ?? dir, 'diff.png'),
      fullPage: true,
    });
    expect(opened.problems).toEqual([]);
    await opened.page.close();
  });
});
