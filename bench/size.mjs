// `npm run bench -- size`: the same samples as Tachyon (version 1 zstd and
// none, version 2 at its defaults; whole file), .cpuprofile JSON, pprof.gz
// with one sample per sample and a timestamp label, and aggregated pprof.gz
// (one sample per distinct stack and thread, as @datadog/pprof writes), for
// every stream in ../shared/data/stacks/. The streams, their model and the
// peers are defined once in bench/_peers.mjs (shared with the v2 benchmark).
// Each stream is measured on two clocks (issue 19): times from 1 s, and
// epoch-based times as agents write them (time_nanos set, as Go writes it;
// epoch timestamp_us labels; @datadog/pprof's end_timestamp_ns labels).
// Bytes per sample, encode and decode time (medians of interleaved rounds).
import { rmSync, mkdtempSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import path from 'node:path';
import { interleave, machine, table } from './_harness.mjs';
import { ALL_STREAMS, EPOCH_PEERS, PEERS, loadModel, readTachyon, writeTachyon } from './_peers.mjs';
import * as pp from '../dist/index.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const tmp = mkdtempSync(path.join(tmpdir(), 'profpack-size-'));
const tach = (name) => path.join(tmp, `p-${name}.tach`);
const load0 = loadavg();

// Tachyon through ProfileWriter / ProfileReader; the peers from bench/_peers.mjs (the library's converters).
const TACHYON = {
  'Tachyon zstd': { compression: 'zstd' },
  'Tachyon none': { compression: 'none' },
  'Tachyon v2': { formatVersion: 2 },
};
function formatsFor(epoch) {
  const formats = {};
  for (const [fmt, options] of Object.entries(TACHYON)) {
    formats[fmt] = {
      encode: (m) => writeTachyon(m, tach(fmt.replace(/ /g, '-')), options),
      decode: () => readTachyon(tach(fmt.replace(/ /g, '-'))),
    };
  }
  // .cpuprofile's size does not depend on the clock's origin: measured once, on the 1 s clock.
  const peers = epoch
    ? { ...Object.fromEntries(Object.entries(PEERS).filter(([fmt]) => fmt !== '.cpuprofile')), ...EPOCH_PEERS }
    : PEERS;
  for (const [fmt, peer] of Object.entries(peers)) {
    formats[fmt] = {
      encode: (m) => (formats[fmt].bytes = peer.encode(m)).length,
      decode: () => peer.decode(formats[fmt].bytes),
    };
  }
  return formats;
}

const rows = [];
const ratioRows = [];
const goalRows = [];
for (const name of ALL_STREAMS) {
  for (const epoch of [false, true]) {
    const clock = epoch ? 'epoch' : '1 s';
    const { model } = loadModel(name, { epoch });
    const n = model.sampleCount;
    const formats = formatsFor(epoch);
    const sizes = {};
    for (const [fmt, f] of Object.entries(formats)) sizes[fmt] = f.encode(model);
    // Version 1's string and frame tables are never compressed (tachyon-format.md §9): how much of the file they are.
    formats['Tachyon zstd'].encode(model);
    const layout = pp.ProfileReader.open(tach('Tachyon-zstd'));
    const tableBytes = layout.layout.fileSize - layout.layout.stringTableOffset;
    layout.close();
    const enc = interleave(
      Object.fromEntries(Object.entries(formats).map(([fmt, f]) => [fmt, () => f.encode(model)])),
      { rounds, warmup: 1 },
    );
    const dec = interleave(Object.fromEntries(Object.entries(formats).map(([fmt, f]) => [fmt, () => f.decode()])), {
      rounds,
      warmup: 1,
    });
    for (const fmt of Object.keys(formats)) {
      rows.push([
        name,
        clock,
        n.toLocaleString('en'),
        fmt,
        sizes[fmt].toLocaleString('en'),
        (sizes[fmt] / n).toFixed(2),
        (enc[fmt] * 1e3).toFixed(1),
        (dec[fmt] * 1e3).toFixed(1),
      ]);
    }
    if (!epoch) {
      ratioRows.push([
        name,
        (sizes['Tachyon zstd'] / sizes['pprof.gz per sample']).toFixed(2),
        (sizes['Tachyon zstd'] / sizes['pprof.gz aggregated']).toFixed(2),
        (sizes['Tachyon zstd'] / sizes['.cpuprofile']).toFixed(3),
        (sizes['Tachyon none'] / sizes['Tachyon zstd']).toFixed(2),
        `${tableBytes.toLocaleString('en')} (${((100 * tableBytes) / sizes['Tachyon zstd']).toFixed(0)} %)`,
        ((sizes['Tachyon zstd'] - tableBytes) / sizes['pprof.gz per sample']).toFixed(2),
      ]);
    }
    // Issue 19's goal for version 2 at its defaults: ≤ 0.5× every per-sample peer and ≤ 1× aggregated.
    const perSample = Object.keys(formats).filter((f) => f.startsWith('pprof.gz per sample'));
    const v2 = sizes['Tachyon v2'];
    const met = perSample.every((f) => v2 <= 0.5 * sizes[f]) && v2 <= sizes['pprof.gz aggregated'];
    goalRows.push([
      name,
      clock,
      perSample.map((f) => `${(v2 / sizes[f]).toFixed(3)}× (${f})`).join(', '),
      `${(v2 / sizes['pprof.gz aggregated']).toFixed(3)}×`,
      met ? '**met**' : 'missed',
    ]);
  }
  console.error(`${name}: done`);
}
rmSync(tmp, { recursive: true, force: true });

const la = (l) => l.map((v) => v.toFixed(2)).join(', ');
const out = [
  `## size`,
  '',
  `\`npm run bench -- size\` (BENCH_ROUNDS=${rounds}), ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${machine()}, backend ${pp.backend.name}; load average (1/5/15 min) ${la(load0)} at the start, ${la(loadavg())} at the end.`,
  '',
  "Clock `1 s`: stream times from 1 s (timestamp labels of 3–4 bytes). Clock `epoch`: the same samples with times from 2026-11-23 00:00 UTC: the pprof writer writes epoch `timestamp_us` labels and `time_nanos` (as Go does); `pprof.gz per sample, end_timestamp_ns` is per-sample pprof with @datadog/pprof's epoch-nanosecond label instead. Tachyon stores times as per-thread deltas: its size does not depend on the clock's origin.",
  '',
  table(['stream', 'clock', 'samples', 'format', 'bytes', 'bytes/sample', 'encode ms', 'decode ms'], rows),
  '',
  table(
    [
      'stream',
      'Tachyon zstd / pprof.gz per sample',
      'Tachyon zstd / aggregated pprof.gz',
      'Tachyon zstd / .cpuprofile',
      'none / zstd',
      'Tachyon zstd: uncompressed tables, bytes (share of file)',
      'Tachyon zstd without tables / pprof.gz per sample',
    ],
    ratioRows,
  ),
  '',
  'Version 2 at its defaults (`formatVersion: 2`: stack table, region zstd-5, tables zstd-9) against the goal of issue 19 (≤ 0.5× per-sample pprof.gz, every variant, and ≤ 1× aggregated), on both clocks:',
  '',
  table(['stream', 'clock', 'v2 / per-sample pprof.gz', 'v2 / aggregated', 'goal'], goalRows),
  '',
];
console.log(out.join('\n'));
