// test tier: slow (the flame and diff pages in Chromium, ~18 s)
/**
 * The flame and diff pages in a real browser (headless Chromium): opened
 * from disk with no network, the recorded hot functions with aggregate()'s
 * counts, search, zoom, icicle, hover details, the thread picker and a
 * dragged time window whose counts are `top --from/--to`'s. Screenshots go
 * to a temp dir (or to $PROFPACK_VIEW_SHOTS, which is how docs/*.png were made).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convert, openProfile } from '../../lib/formats/index';
import { samplesOf } from '../support/model';
import type { ProfileSource } from '../../lib/profile/index';
import { aggregate } from '../../lib/query/aggregate';
import { flame } from '../../lib/view/flame';
import { vectorDir } from '../support/vectors';
import { repoRoot, sharedPath } from '../support/environment';
import { launch, openPage } from './browser';

let browser: Browser;
let dir: string;
const shots = () => process.env.PROFPACK_VIEW_SHOTS ?? dir;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'profpack-view-'));
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Counts = Map<string, { self: number; total: number }>;

function topRows(
  source: ProfileSource,
  options: Parameters<typeof aggregate>[1] = {},
): { samples: number; rows: Counts; order: string[] } {
  const r = aggregate(source, { ...options, limit: 0 });
  const key = (f: string, file: string) => `${f === '' ? '(anonymous)' : f}\u0000${file}`;
  return {
    samples: r.samples,
    rows: new Map(r.rows.map((x) => [key(x.funcname!, x.filename), { self: x.self, total: x.total }])),
    order: r.rows.map((x) => key(x.funcname!, x.filename)),
  };
}

/** The function table the page shows (its first 40 rows). */
async function pageTable(page: Page): Promise<Counts> {
  const rows = await page.$$eval('#functions tbody tr', (trs) =>
    trs.map(
      (tr) =>
        [
          (tr as HTMLElement).dataset.name!,
          (tr as HTMLElement).dataset.file!,
          Number((tr as HTMLElement).dataset.self),
          Number((tr as HTMLElement).dataset.total),
        ] as const,
    ),
  );
  return new Map(rows.map(([n, f, self, total]) => [`${n}\u0000${f}`, { self, total }]));
}

function expectTableMatches(table: Counts, want: Counts): void {
  expect(table.size).toBe(Math.min(40, want.size));
  for (const [k, v] of table) expect([k, v]).toEqual([k, want.get(k)]);
}

/** Per function, from the flame graph's own hierarchy (every node, drawn or too narrow to draw). */
async function flameCounts(page: Page): Promise<Counts> {
  const entries = await page.evaluate(() => {
    type FlameNode = { data: { func: number; node: number; self: number; value: number } };
    const w = window as unknown as {
      d3: { select(selector: string): { datum(): { descendants(): FlameNode[] } } };
      profpackPage: { data: { funcs: { name: string; file: string; thread?: string }[]; recursive: number[] } };
    };
    const data = w.profpackPage.data;
    const out: Record<string, { self: number; total: number }> = {};
    for (const d of w.d3.select('#chart').datum().descendants()) {
      const f = data.funcs[d.data.func]!;
      if (f.thread !== undefined || d.data.node === 0) continue;
      const k = `${f.name}\u0000${f.file}`;
      const c = (out[k] ??= { self: 0, total: 0 });
      c.self += d.data.self;
      if (data.recursive[d.data.node] === 0) c.total += d.data.value;
    }
    return Object.entries(out);
  });
  return new Map(entries);
}

describe('flame page in Chromium', () => {
  it("a recorded Node profile: hot functions with top's counts, hover details, search, zoom, icicle, a dragged window = top --from/--to", async () => {
    // A real Node recording (V8's sampler), as Tachyon like the demo's profile.
    const tach = path.join(dir, 'node.tach');
    convert(sharedPath('data', 'outside', 'node-cpu-prof.heavy.cpuprofile'), tach);
    const out = path.join(dir, 'flame.html');
    const summary = flame(tach, out);
    expect(summary.samples).toBeGreaterThan(1000);
    const source = openProfile(tach);
    try {
      const { page, problems } = await openPage(browser, out);
      const whole = topRows(source);

      // The flame graph's data and the table hold top's counts; the hot functions are drawn.
      const fc = await flameCounts(page);
      const hot = whole.order.filter((k) => !k.startsWith('(')).slice(0, 5);
      for (const k of hot) expect([k, fc.get(k)]).toEqual([k, whole.rows.get(k)]);
      expectTableMatches(await pageTable(page), whole.rows);
      for (const k of hot)
        expect(await page.locator(`#chart g.frame[name="${k.split('\u0000')[0]}"]`).count()).toBeGreaterThan(0);
      expect(await page.$eval('#window', (e) => Number((e as HTMLElement).dataset.samples))).toBe(whole.samples);

      // Hover: the details line names the frame, its file:line and its counts.
      const hottest = hot[0]!.split('\u0000')[0]!;
      const widest = await page.evaluate((name) => {
        const gs = [...document.querySelectorAll(`#chart g.frame[name="${name}"]`)] as SVGGElement[];
        gs.sort((a, b) => b.getBoundingClientRect().width - a.getBoundingClientRect().width);
        gs[0]!.setAttribute('data-widest', '1');
        return (gs[0] as unknown as { __data__: { data: { value: number; self: number } } }).__data__.data;
      }, hottest);
      await page.hover('#chart g.frame[data-widest="1"] rect');
      const details = await page.textContent('#details');
      expect(details).toContain(hottest);
      expect(details).toContain(`total ${widest.value} `);
      expect(details).toContain(`self ${widest.self} `);
      expect(details).toMatch(/\.js:\d+/);

      // Search: matching frames turn the highlight colour; the count is the samples with any matching frame.
      await page.fill('#search', hottest);
      await page.waitForTimeout(400);
      let matching = 0;
      // A record of a Tachyon file may be a REPEAT run: its samples/count value (column 0) is how many samples it holds.
      for (const s of samplesOf(source))
        if (
          Array.from(s.stack).some(
            (i) =>
              source.frames[i]!.funcname.toLowerCase().includes(hottest.toLowerCase()) ||
              source.frames[i]!.filename.toLowerCase().includes(hottest.toLowerCase()),
          )
        )
          matching += s.values[0]!;
      expect(await page.$eval('#search-result', (e) => Number((e as HTMLElement).dataset.samples))).toBe(matching);
      const fills = await page.$$eval(`#chart g.frame[name="${hottest}"] rect`, (rs) =>
        rs.map((r) => r.getAttribute('fill')),
      );
      expect(fills.length).toBeGreaterThan(0);
      expect(new Set(fills)).toEqual(new Set(['#E600E6']));
      await page.screenshot({ path: path.join(shots(), 'flame.png'), fullPage: true });
      await page.fill('#search', '');

      // Zoom: the clicked frame fills the width; its ancestors fade.
      const chartWidth = await page.$eval('#chart svg', (s) => Number(s.getAttribute('width')));
      const before = await page.$eval('#chart g.frame[data-widest="1"] rect', (r) => Number(r.getAttribute('width')));
      expect(before).toBeLessThan(chartWidth - 1);
      await page.click('#chart g.frame[data-widest="1"] rect');
      await page.waitForTimeout(700);
      expect(
        await page.$eval('#chart g.frame[data-widest="1"] rect', (r) => Number(r.getAttribute('width'))),
      ).toBeCloseTo(chartWidth, 0);
      expect(await page.locator('#chart g.frame.fade').count()).toBeGreaterThan(0);
      await page.click('#reset-zoom');
      await page.waitForTimeout(700);
      expect(
        await page.$eval('#chart g.frame[data-widest="1"] rect', (r) => Number(r.getAttribute('width'))),
      ).toBeCloseTo(before, 0);

      // Icicle (the default): the root row on top; the toggle moves it to the bottom and back.
      const rootY = () =>
        page.$eval('#chart g.frame', (g) =>
          Number(/translate\([^,]+,([^)]+)\)/.exec(g.getAttribute('transform')!)![1]),
        );
      expect(await rootY()).toBe(0);
      await page.click('#icicle');
      await page.waitForTimeout(700);
      expect(await rootY()).toBeGreaterThan(0);
      await page.click('#icicle');
      await page.waitForTimeout(500);
      expect(await rootY()).toBe(0);

      // A window dragged on the timeline: snapped to buckets, counts = top --from/--to.
      const box = (await page.locator('#brush .overlay').boundingBox())!;
      await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.55, box.y + box.height / 2, { steps: 8 });
      await page.mouse.up();
      await page.waitForTimeout(600);
      const win = await page.$eval('#window', (e) => ({ ...(e as HTMLElement).dataset }));
      const fromMs = Number(win.fromMs);
      const toMs = Number(win.toMs);
      expect(fromMs).toBeGreaterThan(0);
      expect(toMs).toBeGreaterThan(fromMs);
      const windowed = topRows(source, { fromMs, toMs });
      expect(Number(win.samples)).toBe(windowed.samples);
      expect(windowed.samples).toBeLessThan(whole.samples);
      expect(windowed.samples).toBeGreaterThan(0);
      expectTableMatches(await pageTable(page), windowed.rows);
      const fw = await flameCounts(page);
      for (const k of windowed.order.slice(0, 5)) expect([k, fw.get(k)]).toEqual([k, windowed.rows.get(k)]);
      await page.screenshot({ path: path.join(shots(), 'timeline-window.png'), fullPage: true });
      expect(statSync(path.join(shots(), 'timeline-window.png')).size).toBeGreaterThan(10_000);
      expect(problems).toEqual([]);
      await page.close();
    } finally {
      source.close();
    }
  });

  it("a six-thread profile: the thread picker shows one thread with top --thread's counts", async () => {
    const file = path.join(vectorDir, 's20_random_mix_zstd.bin');
    const out = path.join(dir, 'threads.html');
    flame(file, out);
    const source = openProfile(file);
    try {
      const { page, problems } = await openPage(browser, out);
      const lanes = await page.locator('#timeline .lane-label').count();
      expect(lanes).toBe(6);
      const threads = await page.$$eval('#thread option', (os) =>
        os.map((o) => (o as HTMLOptionElement).value).filter((v) => v !== ''),
      );
      expect(threads.length).toBe(6);
      for (const t of threads.slice(0, 3)) {
        await page.selectOption('#thread', t);
        await page.waitForTimeout(300);
        const want = topRows(source, { thread: t });
        expect(await page.$eval('#window', (e) => Number((e as HTMLElement).dataset.samples))).toBe(want.samples);
        expectTableMatches(await pageTable(page), want.rows);
      }
      expect(problems).toEqual([]);
      await page.close();
    } finally {
      source.close();
    }
  });

  it('names threads on the timeline lanes as the picker does (py-spy --threads), a long name cut to fit', async () => {
    const pySpy = readFileSync(path.join(repoRoot, 'test', 'fixtures', 'formats', 'py-spy-threads.collapsed'), 'utf8');
    const longName = 'ThreadPoolExecutor-0_1 (a worker name longer than the label column)';
    const collapsed = path.join(dir, 'py-spy.collapsed');
    writeFileSync(collapsed, `${pySpy}thread (4260): ${longName};poll (pool.py:9) 1\n`);
    const out = path.join(dir, 'py-spy.html');
    flame(collapsed, out);
    const { page, problems } = await openPage(browser, out);
    // Shown text (the first text node; the <title> child is the hover's full label) and its drawn width.
    const lanes = await page.$$eval('#timeline .lane-label', (ts) =>
      ts.map((t) => ({
        shown: t.firstChild!.nodeValue!,
        full: t.querySelector('title')!.textContent,
        width: (t as SVGTextElement).getComputedTextLength(),
      })),
    );
    expect(lanes.map((l) => l.full)).toEqual([
      'thread 4243 MainThread',
      'thread 4250 worker',
      'thread 139887808104256',
      `thread 4260 ${longName}`,
    ]);
    expect(lanes.slice(0, 3).map((l) => l.shown)).toEqual(lanes.slice(0, 3).map((l) => l.full));
    expect(lanes[3]!.shown).toMatch(/^thread 4260 \S.*\u2026$/);
    expect(`thread 4260 ${longName}`.startsWith(lanes[3]!.shown.slice(0, -1))).toBe(true);
    for (const l of lanes) expect(l.width).toBeLessThanOrEqual(172);
    // The picker's options carry the same labels, with their sample counts.
    const options = await page.$$eval('#thread option[value]:not([value=""])', (os) => os.map((o) => o.textContent));
    expect(options.slice(0, 2)).toEqual(['thread 4243 MainThread (7 samples)', 'thread 4250 worker (3 samples)']);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('a node --cpu-prof profile: the table’s line is the hot line V8’s positionTicks give, its counts the JSON’s', async () => {
    // A real V8 profile of a function whose loop body (line 4) is hot, declared on line 1.
    const script = path.join(dir, 'hot.js');
    writeFileSync(
      script,
      'function hot(n) {\n  let x = 0;\n  for (let i = 0; i < n; i++) {\n    x += Math.sqrt(i) * Math.sin(i);\n  }\n' +
        '  for (let i = 0; i < n / 4; i++) {\n    x -= Math.cos(i);\n  }\n  return x;\n}\n' +
        'const end = Date.now() + 400;\nlet s = 0;\nwhile (Date.now() < end) s += hot(20000);\n',
    );
    const profDir = path.join(dir, 'cpu-prof');
    execFileSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profDir}`, script]);
    const file = path.join(profDir, readdirSync(profDir)[0]!);
    const json = JSON.parse(readFileSync(file, 'utf8')) as {
      nodes: {
        id: number;
        callFrame: { functionName: string; url: string; lineNumber: number };
        positionTicks?: { line: number; ticks: number }[];
      }[];
      samples: number[];
    };
    // The oracle, from the JSON: a node's samples take its positionTicks' lines in order, the rest its own
    // line (lineNumber + 1); per function, self = its nodes' samples, the hot line the line with most of them.
    const hits = new Map<number, number>();
    for (const id of json.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
    const byFunction = new Map<string, { self: number; lines: Map<number, number> }>();
    for (const node of json.nodes) {
      let left = hits.get(node.id) ?? 0;
      if (left === 0) continue;
      const { functionName, url, lineNumber } = node.callFrame;
      const key = `${functionName || '(anonymous)'}\u0000${url.startsWith('file:') ? new URL(url).pathname : url}`;
      let f = byFunction.get(key);
      if (f === undefined) byFunction.set(key, (f = { self: 0, lines: new Map() }));
      f.self += left;
      const put = (line: number, n: number) => {
        if (line > 0 && n > 0) f.lines.set(line, (f.lines.get(line) ?? 0) + n);
      };
      for (const { line, ticks } of node.positionTicks ?? []) {
        put(line, Math.min(ticks, left));
        left -= Math.min(ticks, left);
      }
      put(lineNumber + 1, left);
    }
    const hotLine = (lines: Map<number, number>): number | undefined =>
      [...lines].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]?.[0];

    const out = path.join(dir, 'hot-lines.html');
    flame(file, out, { sampleType: 'samples/count' });
    const { page, problems } = await openPage(browser, out);
    const rows = await page.$$eval('#functions tbody tr', (trs) =>
      trs.map((tr) => {
        const d = (tr as HTMLElement).dataset;
        return { key: `${d.name}\u0000${d.file}`, self: Number(d.self), line: d.line, cell: tr.lastChild!.textContent };
      }),
    );
    let checked = 0;
    for (const row of rows) {
      const want = byFunction.get(row.key);
      if (want === undefined) continue; // (no stack), or a function with no sample of its own
      const line = hotLine(want.lines);
      expect([row.key, row.self, row.line]).toEqual([
        row.key,
        want.self,
        line === undefined ? undefined : String(line),
      ]);
      // The file:line cell (a frame without a file shows none).
      if (line !== undefined && !row.key.endsWith('\u0000')) expect(row.cell).toMatch(new RegExp(`:${line}$`));
      checked++;
    }
    expect(checked).toBeGreaterThan(1);
    const hot = rows.find((r) => r.key === `hot\u0000${script}`)!;
    // The loop bodies, not the declaration (line 1), which DevTools would not show either.
    expect(['4', '7']).toContain(hot.line);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it('escapes what a profile names: a function called </script> cannot break the page', async () => {
    const collapsed = path.join(dir, 'evil.collapsed');
    writeFileSync(
      collapsed,
      'main (a.js:1);</script><script>window.pwned=1</script> (b.js:2) 5\nmain (a.js:1);<!--x (c.js:3) 2\n',
    );
    const out = path.join(dir, 'evil.html');
    flame(collapsed, out);
    const { page, problems } = await openPage(browser, out);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    const table = await pageTable(page);
    expect(table.get('</script><script>window.pwned=1</script>\u0000b.js')).toEqual({ self: 5, total: 5 });
    expect(table.get('<!--x\u0000c.js')).toEqual({ self: 2, total: 2 });
    expect(problems).toEqual([]);
    await page.close();
  });
});
