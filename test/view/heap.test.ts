/**
 * The heap flame page: its data against heapProfile (the whole range is "live
 * at the end", [0, peak + 1) "live at the peak", a window the allocations made
 * in it still live at its end) through the very view model the page runs,
 * and the page itself in Chromium.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { heapProfile, type HeapProfileOptions } from '../../lib/memory/index';
import { aggregate } from '../../lib/query/aggregate';
import { buildHeapViewData, renderHeapFlameHtml, type HeapViewData } from '../../lib/view/index';
import { handTrace, leakAndGarbage } from '../memory/hand-trace';
import { launch, openPage } from './browser';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const view = require('../../lib/view/template/view-model.js') as {
  selectRange(
    data: HeapViewData,
    b0: number,
    b1: number,
    thread: string | null,
  ): { samples: number; self: Float64Array; total: Float64Array };
  functionRows(data: HeapViewData, sel: unknown): { name: string; self: number }[];
};

const trace = () => handTrace(4096, leakAndGarbage(20), 0).trace;

function rowsOf(data: HeapViewData, b0: number, b1: number): Map<string, number> {
  return new Map(
    view
      .functionRows(data, view.selectRange(data, b0, b1, null))
      .filter((r) => r.self > 0)
      .map((r) => [r.name, r.self]),
  );
}

function profileRows(options: HeapProfileOptions): Map<string, number> {
  const rows = aggregate(heapProfile(trace(), options).profile, { sampleType: 'inuse_space', limit: 0 }).rows;
  return new Map(rows.filter((r) => r.self > 0).map((r) => [r.funcname!, r.self]));
}

function expectClose(got: Map<string, number>, want: Map<string, number>): void {
  expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
  // Rounded per entry on the page, per stack in the profile.
  for (const [fn, bytes] of want) expect(Math.abs(got.get(fn)! - bytes)).toBeLessThanOrEqual(25);
}

describe('heap flame page data', () => {
  const data = buildHeapViewData(trace());
  const bucketAt = (ms: number) => Math.floor((ms * 1000) / data.bucketUs);

  it('the whole range is what was live at the end; [0, peak + 1) what was live at the peak', () => {
    expectClose(rowsOf(data, 0, data.bucketCount), profileRows({ at: 'end' }));
    expectClose(rowsOf(data, 0, data.heap.peakBucket + 1), profileRows({ at: 'peak' }));
    expect(data.heap.peakBucket).toBe(bucketAt(20_000));
  });

  it('a window is the allocations made in it that were still live at its end', () => {
    const [b0, b1] = [bucketAt(5500), bucketAt(10_500)];
    const from = (b0 * data.bucketUs) / 1000;
    const to = (b1 * data.bucketUs) / 1000;
    expectClose(rowsOf(data, b0, b1), profileRows({ fromMs: from, toMs: to, at: to }));
    // Garbage lives a second: a window ending between polls still holds the last second's.
    expect(rowsOf(data, b0, b1).get('garbage')).toBeGreaterThan(0);
  });

  it('the timeline is the scaled live bytes, highest at the peak', () => {
    const peak = Math.max(...data.heap.liveBytes);
    expect(data.heap.liveBytes[data.heap.peakBucket]).toBe(peak);
    expect(Math.abs(data.heap.liveBytes[data.bucketCount - 1]! - data.total)).toBeLessThanOrEqual(25);
    expect(data.heap.liveBytes[bucketAt(500)]).toBe(0);
  });
});

/** The hand trace with external memory: thread 1 climbs 1 MiB a second from 2 s, thread 2 holds 5 MiB from 0.5 s. */
function withExternal() {
  const t = trace();
  const samples = [{ threadId: 2, ms: 500, bytes: 5 << 20 }];
  for (let s = 2; s <= 20; s++) samples.push({ threadId: 1, ms: s * 1000, bytes: s << 20 });
  samples.sort((a, b) => a.ms - b.ms);
  for (const m of samples)
    t.memory({ threadId: m.threadId, timeUs: m.ms * 1000, externalBytes: m.bytes, arrayBuffersBytes: m.bytes });
  return { trace: t, samples };
}

describe('heap flame page: the external line', () => {
  it("each bucket holds every thread's latest sample summed, null before the first; none without samples", () => {
    const { trace: t, samples } = withExternal();
    const data = buildHeapViewData(t);
    const external = data.heap.externalBytes!;
    expect(external).toHaveLength(data.bucketCount);
    for (let b = 0; b < data.bucketCount; b++) {
      const endUs = (b + 1) * data.bucketUs + t.meta.startTimeUs;
      const latest = new Map<number, number>();
      for (const m of samples) if (m.ms * 1000 < endUs) latest.set(m.threadId, m.bytes);
      const want = latest.size === 0 ? null : [...latest.values()].reduce((a, v) => a + v, 0);
      expect(external[b]).toBe(want);
    }
    expect(buildHeapViewData(trace()).heap.externalBytes).toBeUndefined();
  });
});

describe('heap flame page in Chromium', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'profpack-heapview-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('opens on live at the end, switches to the peak, and draws the live-bytes timeline', async () => {
    const { html, data } = renderHeapFlameHtml(trace(), { title: 'heap' });
    const file = path.join(dir, 'heap.html');
    writeFileSync(file, html);
    const browser = await launch();
    try {
      const { page, problems } = await openPage(browser, file);
      const windowBytes = async () => Number(await page.locator('#window').getAttribute('data-samples'));
      expect(await windowBytes()).toBe(view.selectRange(data, 0, data.bucketCount, null).samples);
      expect(await page.locator('#window').textContent()).toMatch(/still live at/);
      expect(await page.locator('#timeline rect.live').count()).toBe(data.bucketCount);
      expect(await page.locator('#functions tbody tr[data-name="garbage"]').count()).toBe(0);
      await page.click('#at-peak');
      expect(await windowBytes()).toBe(view.selectRange(data, 0, data.heap.peakBucket + 1, null).samples);
      // At the peak the last second's garbage was still live.
      expect(await page.locator('#functions tbody tr[data-name="garbage"]').count()).toBe(1);
      if (process.env.PROFPACK_SHOTS !== undefined)
        await page.screenshot({ path: path.join(process.env.PROFPACK_SHOTS, 'view-heap.png'), fullPage: true });
      expect(problems).toEqual([]);
      expect(await page.locator('#timeline path.external').count()).toBe(0);
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('draws the external line over the live bars, its end value in its label', async () => {
    const { html, data } = renderHeapFlameHtml(withExternal().trace, { title: 'heap' });
    const file = path.join(dir, 'heap-external.html');
    writeFileSync(file, html);
    const browser = await launch();
    try {
      const { page, problems } = await openPage(browser, file);
      const external = data.heap.externalBytes!;
      const d = (await page.locator('#timeline path.external').getAttribute('d'))!;
      // One point per bucket with a value (d3.line: M x,y then L x,y ...).
      expect(d.split(/[ML]/).filter((p) => p !== '').length).toBe(external.filter((v) => v !== null).length);
      expect(await page.locator('#timeline .external-label').textContent()).toBe('external 25MB (Buffers…)');
      expect(external[data.bucketCount - 1]).toBe((20 + 5) << 20);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
