// `npm run bench -- view [samples]`: the flame page for a large profile.
// Workload: node_terser's real stack stream (../shared/data/stacks, 15,225
// samples of V8 stacks) repeated back to back to 1,000,000 samples (default),
// written as Tachyon; plus bench/_synthetic.mjs's 1 M random-stack profile
// (20 threads, 3,000 frames) as the hard case for the tree's size.
// Measures: flame() in Node (read + tree + buckets + page), the page's bytes
// and stack nodes, the time headless Chromium takes from navigation until the
// page has drawn the timeline, flame graph and table, and one re-aggregation
// of a window (a brush drag's work). Baseline in the same run, loads
// interleaved: the page of the unrepeated 15,225-sample stream.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { median, machine, table } from './_harness.mjs';
import { loadModel } from './_peers.mjs';
import { writeSynthetic } from './_synthetic.mjs';
import * as pp from '../dist/index.js';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');
const total = Number(process.argv[2] ?? 1_000_000);
const dir = mkdtempSync(path.join(tmpdir(), 'profpack-bench-view-'));
const os = await import('node:os');

function repeated(model, samples, file) {
  const w = new pp.ProfileWriter(file, {
    sampleIntervalUs: model.meta.sampleIntervalUs,
    startTimeUs: model.meta.startTimeUs,
  });
  const ids = model.frames.map((f) => w.internFrame(f));
  const list = model.sampleList;
  const span = list.at(-1).timestampUs - list[0].timestampUs + model.meta.sampleIntervalUs;
  let n = 0;
  for (let k = 0; n < samples; k++) {
    for (const s of list) {
      if (n++ >= samples) break;
      w.writeStack(
        s.threadId,
        s.interpreterId,
        s.timestampUs + BigInt(k) * span,
        s.status,
        Array.from(s.stack, (i) => ids[i]),
      );
    }
  }
  w.finalize();
}

const { model } = loadModel('node_terser');
const cases = {};
const small = path.join(dir, 'small.tach');
repeated(model, model.sampleCount, small);
cases['node_terser ×1'] = small;
const big = path.join(dir, 'big.tach');
repeated(model, total, big);
cases[`node_terser repeated to ${total.toLocaleString('en')}`] = big;
const synth = path.join(dir, 'synth.tach');
writeSynthetic(synth, { samples: total, threads: 20, frames: 3000 });
cases[`synthetic random stacks ${total.toLocaleString('en')}`] = synth;

const pages = {};
for (const [name, file] of Object.entries(cases)) {
  const t0 = process.hrtime.bigint();
  const s = pp.flame(file, file.replace(/\.tach$/, '.html'));
  pages[name] = { ...s, flameMs: Number(process.hrtime.bigint() - t0) / 1e6, tachBytes: statSync(file).size };
}

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const loads = Object.fromEntries(Object.keys(pages).map((n) => [n, []]));
const windows = Object.fromEntries(Object.keys(pages).map((n) => [n, []]));
const rounds = 5;
for (let r = 0; r < rounds; r++) {
  for (const name of Object.keys(pages)) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const t0 = Date.now();
    await page.goto(`file://${pages[name].output}`);
    await page.waitForFunction(() => window.profpackPage && window.profpackPage.ready);
    loads[name].push(Date.now() - t0);
    windows[name].push(
      await page.evaluate(() => {
        const p = window.profpackPage;
        const t = performance.now();
        p.state.b0 = Math.floor(p.data.bucketCount / 4);
        p.state.b1 = Math.floor(p.data.bucketCount / 2);
        p.render();
        return performance.now() - t;
      }),
    );
    await page.close();
  }
}
await browser.close();
rmSync(dir, { recursive: true, force: true });

const base = median(loads['node_terser ×1']);
console.log(
  `machine: ${machine()}; load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  table(
    [
      'profile',
      'samples',
      'Tachyon bytes',
      'flame() ms',
      'page bytes',
      'stack nodes',
      'buckets',
      'Chromium load ms (median of 5)',
      'vs ×1 page',
      'window re-aggregation ms',
    ],
    Object.entries(pages).map(([name, p]) => [
      name,
      p.samples.toLocaleString('en'),
      p.tachBytes.toLocaleString('en'),
      p.flameMs.toFixed(0),
      p.bytes.toLocaleString('en'),
      p.nodes.toLocaleString('en'),
      p.buckets,
      median(loads[name]).toFixed(0),
      (median(loads[name]) / base).toFixed(2),
      median(windows[name]).toFixed(1),
    ]),
  ),
);
