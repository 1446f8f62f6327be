// `npm run bench -- size`: the same samples as Tachyon (zstd and none, whole
// file), .cpuprofile JSON, pprof.gz with one sample per sample and a
// timestamp label, and aggregated pprof.gz (one sample per distinct stack and
// thread, as @datadog/pprof writes), for every stream in
// ../shared/data/stacks/ (read here with zlib + JSON; stackstream.py
// documents the format). Bytes per sample, encode and decode time (medians of
// interleaved rounds).
import { readdirSync, readFileSync, rmSync, statSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { interleave, machine, table } from './_harness.mjs';
import * as pp from '../dist/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const stacksDir = path.resolve(here, '..', '..', 'shared', 'data', 'stacks');
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);

/** A frame label of the stream → a model frame, per producer (see the stacks README). */
function frameOf(label) {
  // V8 callFrame: "functionName url:line:column", 0-based, -1 = none.
  let m = /^(.*) (\S*):(-?\d+):(-?\d+)$/.exec(label);
  if (m) {
    const line = Number(m[3]);
    const col = Number(m[4]);
    return { funcname: m[1], filename: m[2], lineno: line >= 0 ? line + 1 : null, endLineno: null, column: col >= 0 ? col + 1 : null, endColumn: null, opcode: null };
  }
  // Tachyon frame-table entry: "file:func:line:endline:col:endcol:opcode".
  m = /^(.*):([^:]*):(-?\d+):(-?\d+):(-?\d+):(-?\d+):(\d+)$/.exec(label);
  if (m) {
    const n = (v) => (Number(v) === -1 ? null : Number(v));
    return { filename: m[1], funcname: m[2], lineno: n(m[3]), endLineno: n(m[4]), column: n(m[5]), endColumn: n(m[6]), opcode: Number(m[7]) === 255 ? null : Number(m[7]) };
  }
  // perf: "dso+hexaddress".
  m = /^(.*)\+([0-9a-f]+)$/.exec(label);
  if (m) return { filename: m[1], funcname: `0x${m[2]}`, lineno: null, endLineno: null, column: null, endColumn: null, opcode: null };
  return { filename: '', funcname: label, lineno: null, endLineno: null, column: null, endColumn: null, opcode: null };
}

function threadOf(name, index) {
  if (name === 'main') return [0n, 0];
  const m = /^(\d+)(?:\/(\d+))?$/.exec(String(name));
  return m ? [BigInt(m[1]), Number(m[2] ?? 0)] : [BigInt(index), 0];
}

function load(file) {
  const doc = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8'));
  const model = new pp.MemoryProfile({ startTimeUs: 0n, sampleIntervalUs: 1000n });
  const threads = doc.threads.map(threadOf);
  const nodeStacks = new Map([[-1, []]]);
  const frameIds = new Map();
  const frameId = (f) => {
    let id = frameIds.get(f);
    if (id === undefined) frameIds.set(f, (id = model.internFrame(frameOf(doc.frames[f]))));
    return id;
  };
  // Prefix-tree nodes are outermost-first; the model's stacks are innermost first.
  const stackOf = (n) => {
    let s = nodeStacks.get(n);
    if (s === undefined) {
      const [parent, frame] = doc.nodes[n];
      s = [frameId(frame), ...stackOf(parent)];
      nodeStacks.set(n, s);
    }
    return s;
  };
  const clocks = new Map();
  const { thread, node, dt_us: dt, status } = doc.samples;
  for (let i = 0; i < node.length; i++) {
    const t = (clocks.get(thread[i]) ?? 0n) + BigInt(dt[i]);
    clocks.set(thread[i], t);
    const [tid, interp] = threads[thread[i]];
    model.writeStack(tid, interp, t, status[i], stackOf(node[i]));
  }
  return model;
}

const tmp = mkdtempSync(path.join(tmpdir(), 'profpack-size-'));
function writeTachyon(model, compression) {
  const file = path.join(tmp, `p-${compression}.tach`);
  const writer = new pp.ProfileWriter(file, { sampleIntervalUs: model.meta.sampleIntervalUs, startTimeUs: model.meta.startTimeUs, compression });
  pp.copyProfile(model, writer);
  writer.finalize();
  return file;
}
function readTachyon(file) {
  const reader = pp.ProfileReader.open(file);
  let n = 0;
  for (const s of reader.samples()) n += s.stack.length >= 0 ? 1 : 0;
  reader.close();
  return n;
}

const formats = {
  'Tachyon zstd': {
    encode: (m) => statSync(writeTachyon(m, 'zstd')).size,
    decode: () => readTachyon(path.join(tmp, 'p-zstd.tach')),
  },
  'Tachyon none': {
    encode: (m) => statSync(writeTachyon(m, 'none')).size,
    decode: () => readTachyon(path.join(tmp, 'p-none.tach')),
  },
  '.cpuprofile': {
    encode: (m) => (formats['.cpuprofile'].bytes = Buffer.from(JSON.stringify(pp.toCpuProfile(m)))).length,
    decode: () => pp.fromCpuProfile(JSON.parse(formats['.cpuprofile'].bytes.toString('utf8'))).sampleCount,
  },
  'pprof.gz per sample': {
    encode: (m) => (formats['pprof.gz per sample'].bytes = pp.toPprof(m)).length,
    decode: () => pp.fromPprof(formats['pprof.gz per sample'].bytes).sampleCount,
  },
  'pprof.gz aggregated': {
    encode: (m) => (formats['pprof.gz aggregated'].bytes = pp.toPprof(m, { aggregate: true })).length,
    decode: () => pp.fromPprof(formats['pprof.gz aggregated'].bytes).sampleCount,
  },
};

const streams = readdirSync(stacksDir).filter((f) => f.endsWith('.stacks.json.gz')).sort();
const rows = [];
const ratioRows = [];
for (const file of streams) {
  const name = file.replace('.stacks.json.gz', '');
  const model = load(path.join(stacksDir, file));
  const n = model.sampleCount;
  const sizes = {};
  for (const [fmt, f] of Object.entries(formats)) sizes[fmt] = f.encode(model);
  // Tachyon's string and frame tables are never compressed (tachyon-format.md §9): how much of the file they are.
  const layout = pp.ProfileReader.open(path.join(tmp, 'p-zstd.tach'));
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
