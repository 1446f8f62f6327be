// test tier: slow (a recording of tsc opened in Chromium, ~23 s)
/**
 * The flame and diff pages of a real deep recording (`profpack record` of
 * tsc type-checking files of TypeScript itself) open with the root and the
 * widest frames in the first screen, in Chromium. Screenshots go to a temp
 * dir (or $PROFPACK_VIEW_SHOTS).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diff } from '../../lib/view/diff';
import { flame } from '../../lib/view/flame';
import { repoRoot } from '../support/environment';
import { launch, openPage } from './browser';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
let browser: Browser;
let dir: string;
let recording: string;
const shots = () => process.env.PROFPACK_VIEW_SHOTS ?? dir;
const VIEWPORT = { width: 1280, height: 900 };

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'profpack-deep-view-'));
  recording = path.join(dir, 'tsc.tach');
  // Declaration files of TypeScript's own package: a few seconds of the checker's deep recursion.
  const files = ['lib/typescript.d.ts', 'lib/lib.dom.d.ts'].map((f) => path.join('node_modules', 'typescript', f));
  const run = spawnSync(
    process.execPath,
    [cli, 'record', '-o', recording, '--', 'node_modules/.bin/tsc', '--noEmit', '--skipLibCheck', 'false', ...files],
    { cwd: repoRoot, encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The chart's frames drawn inside the first screen, the root's box, and the deepest row drawn. */
async function firstScreen(page: Page) {
  return page.evaluate((height) => {
    const frames = [...document.querySelectorAll('#chart g.frame')] as SVGGElement[];
    const boxes = frames.map((g) => ({
      g,
      box: g.getBoundingClientRect(),
      depth: (g as unknown as { __data__: { depth: number } }).__data__.depth,
    }));
    const root = boxes.find((b) => b.depth === 0)!;
    const rows = boxes.filter((b) => b.box.top >= 0 && b.box.bottom <= height);
    const chart = document.querySelector('#chart svg')!.getBoundingClientRect();
    return {
      deepest: Math.max(...boxes.map((b) => b.depth)),
      root: { top: root.box.top, bottom: root.box.bottom, width: root.box.width },
      visibleDepths: [...new Set(rows.map((b) => b.depth))].sort((a, b) => a - b),
      chartHeight: chart.height,
    };
  }, VIEWPORT.height);
}

/**
 * A chart taller than the screen opened at its root: the root's row and the two below it drawn inside the
 * first screen.
 */
function expectRootOnFirstScreen(seen: Awaited<ReturnType<typeof firstScreen>>): void {
  expect(seen.chartHeight).toBeGreaterThan(VIEWPORT.height);
  expect(seen.root.top).toBeGreaterThanOrEqual(0);
  expect(seen.root.bottom).toBeLessThanOrEqual(VIEWPORT.height);
  expect(seen.visibleDepths.slice(0, 3)).toEqual([0, 1, 2]);
}

describe('a deep recording (tsc) in Chromium', () => {
  it('the flame page opens with the root and the widest frames in the first screen', async () => {
    const page = path.join(dir, 'flame.html');
    flame([recording], page);
    const opened = await openPage(browser, page, VIEWPORT);
    try {
      expect(opened.problems).toEqual([]);
      const seen = await firstScreen(opened.page);
      // Deep enough that a flame graph (root at the bottom) would start below the first screen.
      expect(seen.deepest).toBeGreaterThan(40);
      expectRootOnFirstScreen(seen);
      await opened.page.screenshot({ path: path.join(shots(), 'flame-tsc-first-screen.png') });
    } finally {
      await opened.page.close();
    }
  });

  it('the diff page of two tsc recordings opens the same way', async () => {
    const page = path.join(dir, 'diff.html');
    diff(recording, recording, { html: page });
    const opened = await openPage(browser, page, VIEWPORT);
    try {
      expect(opened.problems).toEqual([]);
      const seen = await firstScreen(opened.page);
      expectRootOnFirstScreen(seen);
      await opened.page.screenshot({ path: path.join(shots(), 'diff-tsc-first-screen.png') });
    } finally {
      await opened.page.close();
    }
  });
});
