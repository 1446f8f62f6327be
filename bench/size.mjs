// `npm run bench -- size`: the same samples as Tachyon (zstd and none, whole
// file), .cpuprofile JSON, pprof.gz with one sample per sample and a
// timestamp label, and aggregated pprof.gz (one sample per distinct stack and
// thread, as @datadog/pprof writes), for every stream in
// ../shared/data/stacks/. The streams, their model and the peers are defined
// once in bench/_peers.mjs (shared with the v2 benchmark). Bytes per sample,
// encode and decode time (medians of interleaved rounds).
import { rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { interleave, machine, table } from './_harness.mjs';
import { ALL_STREAMS, PEERS, loadModel, readTachyon, writeTachyon } from './_peers.mjs';
import * as pp from '../dist/index.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const tmp = mkdtempSync(path.join(tmpdir(), 'profpack-size-'));
const tach = (compression) => path.join(tmp, `p-${compression}.tach`);

// Tachyon through ProfileWriter / ProfileReader; the peers from bench/_peers.mjs (the library's converters).
const formats = {
  'Tachyon zstd': {
    encode: (m) => writeTachyon(m, tach('zstd'), { compression: 'zstd' }),
    decode: () => readTachyon(tach('zstd')),
  },
  'Tachyon none': {
    encode: (m) => writeTachyon(m, tach('none'), { compression: 'none' }),
    decode: () => readTachyon(tach('none')),
  },
};
for (const [fmt, peer] of Object.entries(PEERS)) {
  formats[fmt] = {
    encode: (m) => (formats[fmt].bytes = peer.encode(m)).length,
    decode: () => peer.decode(formats[fmt].bytes),
  };
}

const rows = [];
const ratioRows = [];
for (const name of ALL_STREAMS) {
  const { model } = loadModel(name);
  const n = model.sampleCount;
  const sizes = {};
  for (const [fmt, f] of Object.entries(formats)) sizes[fmt] = f.encode(model);
  // Tachyon's string and frame tables are never compressed (tachyon-format.md §9): how much of the file they are.
  const layout = pp.ProfileReader.open(tach('zstd'));
  const tableBytes = layout.layout.fileSize - layout.layout.stringTableOffset;
  layout.close();
  const enc = interleave(Object.fromEntries(Object.entries(formats).map(([fmt, f]) => [fmt, () => f.encode(model)])), { rounds, warmup: 1 });
  const dec = interleave(Object.fromEntries(Object.entries(formats).map(([fmt, f]) => [fmt, () => f.decode()])), { rounds, warmup: 1 });
  for (const fmt of Object.keys(formats)) {
    rows.push([name, n.toLocaleString('en'), fmt, sizes[fmt].toLocaleString('en'), (sizes[fmt] / n).toFixed(2), (enc[fmt] * 1e3).toFixed(1), (dec[fmt] * 1e3).toFixed(1)]);
  }
  ratioRows.push([
    name,
    (sizes['Tachyon zstd'] / sizes['pprof.gz per sample']).toFixed(2),
    (sizes['Tachyon zstd'] / sizes['pprof.gz aggregated']).toFixed(2),
    (sizes['Tachyon zstd'] / sizes['.cpuprofile']).toFixed(3),
    (sizes['Tachyon none'] / sizes['Tachyon zstd']).toFixed(2),
    `${tableBytes.toLocaleString('en')} (${((100 * tableBytes) / sizes['Tachyon zstd']).toFixed(0)} %)`,
    ((sizes['Tachyon zstd'] - tableBytes) / sizes['pprof.gz per sample']).toFixed(2),
  ]);
  console.error(`${name}: done`);
}
rmSync(tmp, { recursive: true, force: true });

const out = [
  `## size`,
  '',
  `\`npm run bench -- size\` (BENCH_ROUNDS=${rounds}), ${new Date().toISOString().slice(0, 10)}, ${machine()}, backend ${pp.backend.name}.`,
  '',
  table(['stream', 'samples', 'format', 'bytes', 'bytes/sample', 'encode ms', 'decode ms'], rows),
  '',
  table(['stream', 'Tachyon zstd / pprof.gz per sample', 'Tachyon zstd / aggregated pprof.gz', 'Tachyon zstd / .cpuprofile', 'none / zstd', 'Tachyon zstd: uncompressed tables, bytes (share of file)', 'Tachyon zstd without tables / pprof.gz per sample'], ratioRows),
  '',
];
console.log(out.join('\n'));
