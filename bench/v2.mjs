// `npm run bench -- v2 [--quick] [stream ...]`: whole-file bytes/sample of
// Tachyon version 1, version 2 with predicted stacks and with the stack table
// (raw, zstd-3, zstd-19), beside pprof.gz per sample (with thread and
// timestamp labels), aggregated pprof.gz and .cpuprofile, on every stream of
// ../shared/data/stacks; then write/read throughput. Issue 8's goal: on every
// real stream v2 ≤ 0.5 × per-sample pprof.gz and ≤ aggregated pprof.gz.
import zlib from 'node:zlib';
import { compress as zstd } from 'zstd-napi';
import * as pprof from 'pprof-format';
import { interleave, machine, table } from './_harness.mjs';
import { REAL_STREAMS, SYNTHETIC_STREAMS, START_TIME_US, loadStream } from './_streams.mjs';
import { v1SampleRegion } from './_v1model.mjs';
import { v2, backend } from '../dist/index.js';
import nativeModule from '../dist/tachyon/v2/native.js';

const v2Backend = backend.name;

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const names = args.filter((a) => !a.startsWith('--'));
const streams = names.length ? names : [...REAL_STREAMS, ...SYNTHETIC_STREAMS];

/** Interns a stream's frames in first-use order (innermost first per sample), as a Tachyon writer does. */
function intern(stream) {
  const strings = [];
  const stringIds = new Map();
  const str = (s) => {
    let id = stringIds.get(s);
    if (id === undefined) stringIds.set(s, (id = strings.push(s) - 1));
    return id;
  };
  const entries = [];
  const frameIds = new Map();
  const remap = new Map();
  for (const s of stream.samples) {
    for (const f of s.stack) {
      if (remap.has(f)) continue;
      const fr = stream.frames[f];
      const e = v2.frameTableEntry(str(fr.filename), str(fr.funcname), fr.lineno, fr.endLineno, fr.column, fr.endColumn, fr.opcode);
      const key = Object.values(e).join(',');
      let id = frameIds.get(key);
      if (id === undefined) frameIds.set(key, (id = entries.push(e) - 1));
      remap.set(f, id);
    }
  }
  const samples = stream.samples.map((s) => ({ ...s, stack: Uint32Array.from(s.stack, (f) => remap.get(f)) }));
  return { strings, entries, samples };
}

function v1File(stream, tables, level) {
  const region = v1SampleRegion(tables.samples, START_TIME_US);
  const stored = level === 0 ? region.length : zstd(region, { compressionLevel: level }).length;
  const t = v2.encodeStringTable(tables.strings).length + v2.encodeFrameTable(tables.entries, 'plain').length;
  return 64 + stored + t + 32;
}

function writeV2(stream, tables, options) {
  const w = v2.V2FileWriter.inMemory({ sampleIntervalUs: stream.intervalUs, startTimeUs: START_TIME_US, ...options });
  for (const e of tables.entries) w.internFrameEntry(e);
  // The writer's string table is the interned list: register strings in the same order.
  for (const s of tables.strings) w.internString(s);
  for (const s of tables.samples) w.writeStack(s.threadId, s.interpreterId, s.timestampUs, s.status, s.stack);
  return w.finalize();
}

function pprofPeers(stream) {
  const strings = new pprof.StringTable();
  const functions = [];
  const functionIds = new Map();
  const mappings = [];
  const mappingIds = new Map();
  const used = new Set();
  for (const s of stream.samples) for (const f of s.stack) used.add(f);
  const locations = [];
  for (const f of used) {
    const fr = stream.frames[f];
    if (fr.address !== undefined) {
      let m = mappingIds.get(fr.filename);
      if (m === undefined) {
        mappingIds.set(fr.filename, (m = mappings.length + 1));
        mappings.push(new pprof.Mapping({ id: m, filename: strings.dedup(fr.filename) }));
      }
      locations.push(new pprof.Location({ id: f + 1, mappingId: m, address: fr.address }));
      continue;
    }
    const key = `${fr.filename}\0${fr.funcname}`;
    let fid = functionIds.get(key);
    if (fid === undefined) {
      functionIds.set(key, (fid = functions.length + 1));
      functions.push(new pprof.Function({ id: fid, name: strings.dedup(fr.funcname), filename: strings.dedup(fr.filename) }));
    }
    locations.push(new pprof.Location({ id: f + 1, line: [{ functionId: fid, line: Math.max(fr.lineno, 0), column: Math.max(fr.column, 0) }] }));
  }
  const threadKey = strings.dedup('thread');
  const timeKey = strings.dedup('timestamp_us');
  const base = {
    sampleType: [
      { type: strings.dedup('samples'), unit: strings.dedup('count') },
      { type: strings.dedup('wall'), unit: strings.dedup('microseconds') },
    ],
    periodType: { type: strings.dedup('wall'), unit: strings.dedup('microseconds') },
    period: stream.intervalUs,
    mapping: mappings,
    location: locations,
    function: functions,
    stringTable: strings,
  };
  const ids = (stack) => stack.map((f) => f + 1);
  const perSample = stream.samples.map((s) => ({
    locationId: ids(s.stack),
    value: [1, s.dtUs],
    label: [
      { key: threadKey, num: Number(s.threadId) },
      { key: timeKey, num: s.timestampUs },
    ],
  }));
  const aggregated = new Map();
  for (const s of stream.samples) {
    const key = s.stack.join(',');
    const a = aggregated.get(key);
    if (a) {
      a.value[0]++;
      a.value[1] += s.dtUs;
    } else aggregated.set(key, { locationId: ids(s.stack), value: [1, s.dtUs] });
  }
  const gz = (p) => zlib.gzipSync(new pprof.Profile({ ...base, sample: p }).encode()).length;
  return { perSample: gz(perSample), aggregated: gz([...aggregated.values()]) };
}

/** .cpuprofile (V8's node tree + samples + timeDeltas), one per thread (it holds one thread). */
function cpuprofileSize(stream) {
  let raw = 0;
  let gz = 0;
  const byThread = new Map();
  for (const s of stream.samples) {
    if (!byThread.has(s.thread)) byThread.set(s.thread, []);
    byThread.get(s.thread).push(s);
  }
  for (const samples of byThread.values()) {
    const nodes = [{ id: 1, callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 }, hitCount: 0, children: [] }];
    const children = new Map();
    const nodeOf = (stack) => {
      let id = 1;
      for (let i = stack.length - 1; i >= 0; i--) {
        const key = `${id}:${stack[i]}`;
        let c = children.get(key);
        if (c === undefined) {
          const fr = stream.frames[stack[i]];
          c = nodes.length + 1;
          children.set(key, c);
          nodes.push({ id: c, callFrame: { functionName: fr.funcname, scriptId: '0', url: fr.filename, lineNumber: fr.lineno, columnNumber: fr.column }, hitCount: 0, children: [] });
          nodes[id - 1].children.push(c);
        }
        id = c;
      }
      nodes[id - 1].hitCount++;
      return id;
    };
    const profile = { nodes, startTime: START_TIME_US, endTime: samples[samples.length - 1].timestampUs, samples: [], timeDeltas: [] };
    for (const s of samples) {
      profile.samples.push(nodeOf(s.stack));
      profile.timeDeltas.push(s.dtUs);
    }
    const json = Buffer.from(JSON.stringify(profile));
    raw += json.length;
    gz += zlib.gzipSync(json).length;
  }
  return { raw, gz };
}

const fmt = (bytes, n) => (bytes / n).toFixed(2);
const sizeRows = [];
const goalRows = [];
const mtfRows = [];
const speedRows = [];
for (const name of streams) {
  const stream = loadStream(name);
  const tables = intern(stream);
  const n = stream.samples.length;
  const peers = pprofPeers(stream);
  const cpu = cpuprofileSize(stream);
  const v1 = { raw: v1File(stream, tables, 0), z3: v1File(stream, tables, 3), z5: v1File(stream, tables, 5), z19: v1File(stream, tables, 19) };
  const sizes = {};
  for (const coding of ['predict', 'stacktable']) {
    sizes[coding] = {
      raw: writeV2(stream, tables, { stackCoding: coding, compression: 'none', compressTables: false }).length,
      z3: writeV2(stream, tables, { stackCoding: coding, compression: 'zstd', level: 3 }).length,
      z19: writeV2(stream, tables, { stackCoding: coding, compression: 'zstd', level: 19 }).length,
    };
  }
  const real = REAL_STREAMS.includes(name);
  sizeRows.push([
    `${name}${real ? '' : ' (synthetic)'}`,
    n,
    `${fmt(v1.raw, n)} / ${fmt(v1.z3, n)} / ${fmt(v1.z19, n)}`,
    `${fmt(sizes.predict.raw, n)} / ${fmt(sizes.predict.z3, n)} / ${fmt(sizes.predict.z19, n)}`,
    `${fmt(sizes.stacktable.raw, n)} / ${fmt(sizes.stacktable.z3, n)} / ${fmt(sizes.stacktable.z19, n)}`,
    fmt(peers.perSample, n),
    fmt(peers.aggregated, n),
    `${fmt(cpu.raw, n)} / ${fmt(cpu.gz, n)}`,
  ]);
  const limit = Math.min(0.5 * peers.perSample, peers.aggregated);
  const verdict = (bytes) => `${(bytes / peers.perSample).toFixed(2)}× / ${(bytes / peers.aggregated).toFixed(2)}× ${bytes <= limit ? 'met' : 'missed'}`;
  goalRows.push([name + (real ? '' : ' (synthetic)'), `${(v1.z5 / peers.perSample).toFixed(2)}× / ${(v1.z5 / peers.aggregated).toFixed(2)}×`, verdict(sizes.predict.z19), verdict(sizes.stacktable.z19), verdict(sizes.stacktable.z3)]);

  // Move-to-front codes for the frame table's name indices: smaller or not?
  const z = (b) => zstd(b, { compressionLevel: 19 }).length;
  const coded = ['plain', 'mtf', 'columns'].map((c) => v2.encodeFrameTable(tables.entries, c));
  mtfRows.push([name, tables.entries.length, ...coded.map((b) => `${b.length} / ${z(b)}`)]);

  if (!quick && real) {
    const files = {
      predict: writeV2(stream, tables, { stackCoding: 'predict' }),
      stacktable: writeV2(stream, tables, { stackCoding: 'stacktable' }),
    };
    const opened = { predict: v2.readProfileV2(files.predict), stacktable: v2.readProfileV2(files.stacktable) };
    // The JS twin through the same per-sample callback shape as forEachSample.
    const jsDecode = (p) => () => new v2.SampleBlockReader({ sampleIntervalUs: p.info.sampleIntervalUs, startTimeUs: p.info.startTimeUs }).decodeRegion(p.region, 64, () => {});
    const cases = {
      'v1 write (model, zstd-5)': () => zstd(v1SampleRegion(tables.samples, START_TIME_US), { compressionLevel: 5 }),
      'v2-predict write': () => writeV2(stream, tables, { stackCoding: 'predict' }),
      'v2-stacktable write': () => writeV2(stream, tables, { stackCoding: 'stacktable' }),
      'v2-predict read JS': jsDecode(opened.predict),
      'v2-stacktable read JS': jsDecode(opened.stacktable),
    };
    // Batch columns for the native encoder (one crossing for the whole stream, as a writer's tick batches would be).
    const batch = {
      threadIds: BigUint64Array.from(tables.samples, (s) => s.threadId),
      interpreterIds: Uint32Array.from(tables.samples, (s) => s.interpreterId),
      timestamps: BigUint64Array.from(tables.samples, (s) => BigInt(s.timestampUs)),
      statuses: Uint8Array.from(tables.samples, (s) => s.status),
      stackEnds: (() => { let e = 0; return Uint32Array.from(tables.samples, (s) => (e += s.stack.length)); })(),
      frames: Uint32Array.from(tables.samples.flatMap((s) => Array.from(s.stack))),
    };
    const nativeWrite = (kind) => () => {
      const native = nativeModule.v2Native;
      const h = native.createEncoder(kind, BigInt(stream.intervalUs), BigInt(START_TIME_US), 65536);
      const blocks = native.encodeSamples(h, batch.threadIds, batch.interpreterIds, batch.timestamps, batch.statuses, batch.stackEnds, batch.frames);
      blocks.push(native.flushEncoder(h));
      zstd(Buffer.concat(blocks), { compressionLevel: 5 });
    };
    if (v2Backend === 'native') {
      cases['v2-predict write native'] = nativeWrite(4);
      cases['v2-stacktable write native'] = nativeWrite(5);
      cases['v2-predict read native'] = () => opened.predict.forEachSample(() => {});
      cases['v2-stacktable read native'] = () => opened.stacktable.forEachSample(() => {});
    }
    // Each case repeats its work so that one round lasts tens of ms (JIT-warm, timer noise small).
    const reps = { write: 3, read: 20 };
    const repeated = Object.fromEntries(Object.entries(cases).map(([k, f]) => [k, () => { for (let r = 0; r < (k.includes('read') ? reps.read : reps.write); r++) f(); }]));
    const raw = interleave(repeated, { rounds: 5, warmup: 2 });
    const times = Object.fromEntries(Object.entries(raw).map(([k, t]) => [k, t / (k.includes('read') ? reps.read : reps.write)]));
    const rate = (t) => (t === undefined ? 'n/a' : `${(n / t / 1e6).toFixed(2)} M/s`);
    const base = times['v1 write (model, zstd-5)'];
    speedRows.push([
      name,
      rate(base),
      `${rate(times['v2-predict write'])} / ${rate(times['v2-predict write native'])}`,
      `${rate(times['v2-stacktable write'])} / ${rate(times['v2-stacktable write native'])}`,
      `${rate(times['v2-predict read JS'])} / ${rate(times['v2-predict read native'])}`,
      `${rate(times['v2-stacktable read JS'])} / ${rate(times['v2-stacktable read native'])}`,
    ]);
  }
}

console.log(`## v2\n\nCommand: \`npm run bench -- v2${args.length ? ' ' + args.join(' ') : ''}\` — ${new Date().toISOString().slice(0, 10)}, ${machine()}\n`);
console.log('Whole-file bytes per sample (header, tables, footer included). Tachyon columns: raw / zstd-3 / zstd-19 of the sample region; v2 compresses its tables (zstd-19) when the region is compressed. v1 = CPython\'s record rule (bench/_v1model.mjs), tables raw as CPython writes them.\n');
console.log(table(['stream', 'samples', 'v1', 'v2-predict', 'v2-stacktable', 'pprof.gz per sample', 'pprof.gz aggregated', '.cpuprofile raw / gz'], sizeRows));
console.log('\nGoal check (ratio to per-sample pprof.gz / to aggregated pprof.gz; met = ≤ 0.5× per-sample and ≤ 1× aggregated):\n');
console.log(table(['stream', 'v1 zstd-5 (CPython default)', 'v2-predict zstd-19', 'v2-stacktable zstd-19', 'v2-stacktable zstd-3'], goalRows));
console.log('\nFrame-table codings, bytes raw / zstd-19 (plain = version 1 rows; mtf = move-to-front name codes; columns = v2 default):\n');
console.log(table(['stream', 'frames', 'plain', 'mtf', 'columns'], mtfRows));
if (speedRows.length) {
  console.log(`\nThroughput, samples/s, in memory (no file I/O), zstd-5 region, medians of 5 interleaved rounds. Writes: JS = V2FileWriter, one writeStack per sample, interning and finalize included (tables at zstd-19, a fixed cost per file that dominates these short streams); native = the block encoder on the whole stream as one batch + zstd-5 of the region (no tables). v1 write = the record model + zstd-5, no tables. Reads: decoding the already-decompressed region, JS / native (backend: ${v2Backend}):\n`);
  console.log(table(['stream', 'v1 write (model)', 'v2-predict write JS / native', 'v2-stacktable write JS / native', 'v2-predict read JS / native', 'v2-stacktable read JS / native'], speedRows));
}
