// `npm run bench -- v2 [--quick] [stream ...]`: whole files written by the
// real ProfileWriter — Tachyon version 1, version 2 with predicted stacks and
// with the stack table, each raw and at zstd 3 / 5 (the default) / 19 — beside
// the peers of the size benchmark (bench/_peers.mjs: the library's pprof writer per
// sample and aggregated, toCpuProfile), on every stream of
// ../shared/data/stacks; then write and read throughput through
// ProfileWriter / ProfileReader.samples() on both backends (interleaved
// rounds, medians). Issue 8's goal: on every real stream v2 ≤ 0.5 × per-sample
// pprof.gz and ≤ aggregated pprof.gz.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import { compress as zstd } from 'zstd-napi';
import path from 'node:path';
import { interleaveRounds, machine, median, table } from './_harness.mjs';
import {
  ALL_STREAMS,
  PEERS,
  REAL_STREAMS,
  TickModel,
  fileBytes,
  loadModel,
  readTachyon,
  writeTachyon,
} from './_peers.mjs';
import { v2, backend, ProfileReader } from '../dist/index.js';
import { WRITER_INTERNALS } from '../dist/tachyon/write/writer.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const names = args.filter((a) => !a.startsWith('--'));
const streams = names.length ? names : ALL_STREAMS;
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'profpack-v2-'));
const load0 = os.loadavg();

const CODINGS = {
  v1: { formatVersion: 1 },
  'v2-predict': { formatVersion: 2, stackCoding: 'predict' },
  'v2-stacktable': { formatVersion: 2, stackCoding: 'stacktable' },
};
const LEVELS = {
  raw: { compression: 'none' },
  'zstd-3': { compression: 'zstd', level: 3 },
  'zstd-5': { compression: 'zstd', level: 5 },
  'zstd-19': { compression: 'zstd', level: 19 },
};
const fileOf = (coding, level, be) => path.join(tmp, `${coding}.${level}.${be}.tach`);
const backends = backend.name === 'native' ? ['native', 'js'] : ['js'];

/** Frame-table entries of a model in first-use order, strings interned as met (a Tachyon writer's order). */
function frameEntries(model) {
  const strings = new Map();
  const str = (s) => strings.get(s) ?? (strings.set(s, strings.size), strings.size - 1);
  const seen = new Set();
  const entries = [];
  const m1 = (v) => v ?? -1;
  for (const s of model.samples()) {
    for (const f of s.stack) {
      if (seen.has(f)) continue;
      seen.add(f);
      const fr = model.frames[f];
      entries.push(
        v2.frameTableEntry(
          str(fr.filename),
          str(fr.funcname),
          m1(fr.lineno),
          m1(fr.endLineno),
          m1(fr.column),
          m1(fr.endColumn),
          fr.opcode,
        ),
      );
    }
  }
  return entries;
}

const perSample = (bytes, n) => (bytes / n).toFixed(2);
const sizeRows = [];
const goalRows = [];
const goal = {}; // goal[coding][level] = streams (real) where the goal is met
const mtfRows = [];
const writeRows = [];
const readRows = [];
const mismatches = [];
const columnRows = [];
const tableRows = [];

/** zstd of `bytes` at `level`: size and the median ms of 5 runs. */
function zstdCost(bytes, level) {
  const ms = [];
  let size = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = process.hrtime.bigint();
    size = zstd(bytes, { compressionLevel: level }).length;
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { size, ms: median(ms) };
}

/**
 * Where a v2-stacktable file's bytes go: the file written raw (no zstd, tables plain), its blocks'
 * columns (docs/format-v2.md §3) gathered and each compressed alone; the region and the tables as
 * the writer stores them, at several levels, with the time zstd takes (the tables are compressed once, at finalize).
 */
function anatomy(model, name, n) {
  const file = path.join(tmp, 'anatomy.tach');
  writeTachyon(model, file, {
    formatVersion: 2,
    stackCoding: 'stacktable',
    compression: 'none',
    [WRITER_INTERNALS]: { compressTables: false },
  });
  const b = fileBytes(file);
  const regionEnd = Number(b.readBigUInt64LE(40));
  const region = b.subarray(64, regionEnd);
  // The writer compresses each table alone (the frame table's span here also holds the small stats block, if any).
  const frameTableAt = Number(b.readBigUInt64LE(48));
  const tables = [b.subarray(regionEnd, frameTableAt), b.subarray(frameTableAt, b.length - 32)];
  const columns = v2.BLOCK_COLUMNS.map(() => []);
  let pos = 0;
  const varint = () => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = region[pos++];
      v += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return v;
    }
  };
  while (pos < region.length) {
    pos += 13;
    varint();
    const lengths = v2.BLOCK_COLUMNS.map(() => varint());
    for (let c = 0; c < lengths.length; c++) {
      columns[c].push(region.subarray(pos, pos + lengths[c]));
      pos += lengths[c];
    }
  }
  const col = (...names) => Buffer.concat(names.flatMap((c) => columns[v2.BLOCK_COLUMNS.indexOf(c)]));
  const z = (bytes) =>
    `${zstd(bytes, { compressionLevel: 5 }).length.toLocaleString('en')} / ${zstd(bytes, { compressionLevel: 19 }).length.toLocaleString('en')}`;
  const frames = col('stackFrames');
  const r = [5, 9, 19].map((l) => zstdCost(region, l));
  columnRows.push([
    name,
    n.toLocaleString('en'),
    r.map((c) => c.size.toLocaleString('en')).join(' / '),
    z(col('deltas', 'deltasHigh')),
    z(col('threads', 'threadDefinitions', 'statuses')),
    z(col('stacks', 'stacksHigh')),
    z(col('parents')),
    z(col('parentsHigh')),
    `${frames.length.toLocaleString('en')} → ${z(frames)}`,
  ]);
  const t = [5, 9, 19].map((l) => {
    const [s, f] = tables.map((bytes) => zstdCost(bytes, l));
    return { size: s.size + f.size, ms: s.ms + f.ms };
  });
  tableRows.push([
    name,
    region.length.toLocaleString('en'),
    r.map((c) => `${c.size.toLocaleString('en')} (${c.ms.toFixed(1)} ms)`).join(' / '),
    (tables[0].length + tables[1].length).toLocaleString('en'),
    t.map((c) => `${c.size.toLocaleString('en')} (${c.ms.toFixed(1)} ms)`).join(' / '),
  ]);
}

for (const name of streams) {
  const { model, real } = loadModel(name);
  const n = model.sampleCount;
  const peers = Object.fromEntries(Object.entries(PEERS).map(([fmt, p]) => [fmt, p.encode(model).length]));
  const sizes = {};
  for (const [coding, c] of Object.entries(CODINGS)) {
    sizes[coding] = {};
    for (const [level, l] of Object.entries(LEVELS)) {
      for (const be of backends) {
        const bytes = writeTachyon(model, fileOf(coding, level, be), { ...c, ...l, backend: be });
        if (be === backends[0]) sizes[coding][level] = bytes;
        // Both backends must write the same file; say so if they do not.
        else if (!fileBytes(fileOf(coding, level, be)).equals(fileBytes(fileOf(coding, level, backends[0]))))
          mismatches.push(`${name} ${coding} ${level}: ${be} ${bytes} B vs ${backends[0]} ${sizes[coding][level]} B`);
      }
      if (readTachyon(fileOf(coding, level, backends[0])) !== n)
        throw new Error(`${name} ${coding} ${level}: the reader did not return ${n} samples`);
    }
  }
  const label = name + (real ? '' : ' (synthetic)');
  const cell = (coding) =>
    Object.keys(LEVELS)
      .map((l) => perSample(sizes[coding][l], n))
      .join(' / ');
  sizeRows.push([
    label,
    n,
    cell('v1'),
    cell('v2-predict'),
    cell('v2-stacktable'),
    perSample(peers['pprof.gz per sample'], n),
    perSample(peers['pprof.gz aggregated'], n),
    perSample(peers['.cpuprofile'], n),
  ]);

  const limit = Math.min(0.5 * peers['pprof.gz per sample'], peers['pprof.gz aggregated']);
  const verdict = (coding, level) => {
    const bytes = sizes[coding][level];
    const met = bytes <= limit;
    if (real) {
      goal[coding] ??= {};
      goal[coding][level] ??= [];
      if (met) goal[coding][level].push(name);
    }
    return `${(bytes / peers['pprof.gz per sample']).toFixed(2)} / ${(bytes / peers['pprof.gz aggregated']).toFixed(2)} ${met ? '**met**' : 'missed'}`;
  };
  goalRows.push([
    label,
    ...Object.keys(CODINGS).flatMap((c) => ['zstd-3', 'zstd-5', 'zstd-19'].map((l) => verdict(c, l))),
  ]);

  // Move-to-front codes for the frame table's name indices: smaller or not after zstd-19?
  const entries = frameEntries(model);
  mtfRows.push([
    name,
    entries.length,
    ...['plain', 'mtf', 'columns'].map((c) => {
      const b = v2.encodeFrameTable(entries, c);
      return `${b.length} / ${zstd(b, { compressionLevel: 19 }).length}`;
    }),
  ]);

  if (real) anatomy(model, name, n);

  if (!quick && real) {
    // Writes at the default level (zstd-5) through ProfileWriter, file included; reads of those files.
    const cases = {};
    for (const coding of Object.keys(CODINGS)) {
      for (const be of backends) {
        cases[`write ${coding} ${be}`] = () =>
          writeTachyon(model, fileOf(coding, 'bench', be), { ...CODINGS[coding], ...LEVELS['zstd-5'], backend: be });
        cases[`read ${coding} ${be}`] = () => readTachyon(fileOf(coding, 'zstd-5', backends[0]), { backend: be });
      }
    }
    const times = interleaveRounds(cases, { rounds, warmup: 2 });
    const rate = (k) => `${(n / median(times[k]) / 1e6).toFixed(2)}`;
    // Ratio to v1 on the same backend: median of per-round ratios (both ran moments apart).
    const vsV1 = (op, coding, be) =>
      median(times[`${op} ${coding} ${be}`].map((t, r) => times[`${op} v1 ${be}`][r] / t)).toFixed(2);
    const row = (op) => [
      name,
      ...backends.flatMap((be) => [
        rate(`${op} v1 ${be}`),
        ...['v2-predict', 'v2-stacktable'].map((c) => `${rate(`${op} ${c} ${be}`)} (${vsV1(op, c, be)}×)`),
      ]),
    ];
    writeRows.push(row('write'));
    readRows.push(row('read'));
  }
  console.error(`${name}: done`);
}

// The real CPython profiles among the shared vectors (r*: CPython's sampler on real workloads), as
// ProfileWriter rewrites them (v1, v2 at the defaults) beside the same peers, on CPython's own clock.
const cpythonRows = [];
const vectors = path.resolve(
  path.dirname(new URL(import.meta.url).pathname),
  '..',
  '..',
  'shared',
  'vectors',
  'tachyon',
);
for (const f of readdirSync(vectors)
  .filter((f) => /^r\d+.*\.bin$/.test(f))
  .sort()) {
  const reader = ProfileReader.open(path.join(vectors, f));
  const model = new TickModel({ startTimeUs: reader.info.startTimeUs, sampleIntervalUs: reader.info.sampleIntervalUs });
  const ids = reader.frames.map((fr) => model.internFrame(fr));
  for (const s of reader.samples())
    model.writeStack(
      s.threadId,
      s.interpreterId,
      s.timestampUs,
      s.status,
      Array.from(s.stack, (i) => ids[i]),
    );
  reader.close();
  const n = model.sampleCount;
  const v1 = writeTachyon(model, path.join(tmp, 'r-v1.tach'), {});
  const v2b = writeTachyon(model, path.join(tmp, 'r-v2.tach'), { formatVersion: 2 });
  const per = PEERS['pprof.gz per sample'].encode(model).length;
  const agg = PEERS['pprof.gz aggregated'].encode(model).length;
  cpythonRows.push([
    f,
    n,
    v1,
    v2b,
    per,
    agg,
    `${(v2b / per).toFixed(2)} / ${(v2b / agg).toFixed(2)} ${v2b <= 0.5 * per && v2b <= agg ? '**met**' : 'missed'}`,
  ]);
}
rmSync(tmp, { recursive: true, force: true });

const load1 = os.loadavg();
const la = (l) => l.map((v) => v.toFixed(2)).join(', ');
console.log(
  `## v2\n\nCommand: \`npm run compile && node bench/run.mjs v2${args.length ? ' ' + args.join(' ') : ''}\` (BENCH_ROUNDS=${rounds}) — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${machine()}, process backend ${backend.name}; load average (1/5/15 min) ${la(load0)} at the start, ${la(load1)} at the end (shared machine).\n`,
);
console.log(
  "Peers: bench/_peers.mjs, the same definitions as `## size` (the library's pprof writer per sample: values samples/count 1 and wall/nanoseconds, labels thread_id, status when not 0, timestamp_us; the same aggregated; its .cpuprofile writer). Tachyon: whole files written by ProfileWriter (header, tables, footer included); v2 compresses its tables (zstd-9) when compression is zstd; v2-stacktable is block kind 6 (stacks named by recency, docs/format-v2.md §4.3).\n",
);
console.log('Whole-file bytes per sample. Tachyon columns: raw / zstd-3 / zstd-5 / zstd-19.\n');
console.log(
  table(
    [
      'stream',
      'samples',
      'v1',
      'v2-predict',
      'v2-stacktable',
      'pprof.gz per sample',
      'pprof.gz aggregated',
      '.cpuprofile',
    ],
    sizeRows,
  ),
);
console.log(
  `\n${mismatches.length ? `Native and JS writers differ: ${mismatches.join('; ')}.` : `The native and JS writers wrote byte-identical files for every coding and level above${backends.length > 1 ? '' : ' (JS only: the native backend is not available)'}.`}\n`,
);
console.log(
  'Goal check: ratio to per-sample pprof.gz / to aggregated pprof.gz; **met** = ≤ 0.5× per-sample and ≤ 1× aggregated.\n',
);
console.log(
  table(
    ['stream', ...Object.keys(CODINGS).flatMap((c) => ['zstd-3', 'zstd-5', 'zstd-19'].map((l) => `${c} ${l}`))],
    goalRows,
  ),
);
const realCount = streams.filter((s) => REAL_STREAMS.includes(s)).length;
console.log(`\nReal streams meeting the goal (of ${realCount}):\n`);
console.log(
  table(
    ['coding', 'zstd-3', 'zstd-5', 'zstd-19'],
    Object.keys(CODINGS).map((c) => [
      c,
      ...['zstd-3', 'zstd-5', 'zstd-19'].map((l) => {
        const met = goal[c]?.[l] ?? [];
        return met.length === realCount
          ? `${met.length} (all)`
          : `${met.length}${met.length ? ` (${met.join(', ')})` : ''}`;
      }),
    ]),
  ),
);
console.log(
  '\nFrame-table codings, bytes raw / zstd-19 (plain = version 1 rows; mtf = move-to-front name codes; columns = v2 default):\n',
);
console.log(table(['stream', 'frames', 'plain', 'mtf', 'columns'], mtfRows));
if (cpythonRows.length) {
  console.log(
    '\nReal CPython 3.15 profiles of ../shared/vectors/tachyon (r*), read and rewritten by ProfileWriter at the defaults; bytes, whole files:\n',
  );
  console.log(
    table(
      [
        'vector',
        'samples',
        'v1 zstd-5',
        'v2 (defaults)',
        'pprof.gz per sample',
        'pprof.gz aggregated',
        'v2 / per sample / aggregated',
      ],
      cpythonRows,
    ),
  );
}
if (columnRows.length) {
  console.log("\n### Where v2-stacktable's bytes go\n");
  console.log(
    "A file written raw (no zstd, plain tables); its blocks' columns gathered over the file and each compressed alone, bytes at zstd-5 / zstd-19 (docs/format-v2.md §3, §4.3). Region: the whole sample region as the writer compresses it, at zstd-5 / 9 / 19.\n",
  );
  console.log(
    table(
      [
        'stream',
        'samples',
        'region z5 / z9 / z19',
        'time: deltas + deltasHigh',
        'threads + statuses',
        'k: stacks + stacksHigh',
        'dist: parents',
        'pop: parentsHigh',
        'stackFrames raw → z5 / z19',
      ],
      columnRows,
    ),
  );
  console.log(
    '\nLevels of the region and of the tables (string + frame table, written once at finalize): bytes (median ms of 5 zstd calls, this machine, under the load above).\n',
  );
  console.log(
    table(['stream', 'region raw', 'region zstd-5 / 9 / 19', 'tables raw', 'tables zstd-5 / 9 / 19'], tableRows),
  );
}
if (writeRows.length) {
  const head = (op) => [
    'stream',
    ...backends.flatMap((be) => [`v1 ${op} ${be}`, `v2-predict ${be}`, `v2-stacktable ${be}`]),
  ];
  console.log(
    `\nThroughput, million samples/s (median of ${rounds} interleaved rounds, after 2 warm-up rounds), at zstd-5 (the default level). In brackets: speed relative to v1 on the same backend (median of per-round ratios; > 1 = faster than v1).\n`,
  );
  console.log(
    'Write: `new ProfileWriter(file, { formatVersion, stackCoding, level: 5, backend })`, one writeStack per sample from the model, finalize and the file included.\n',
  );
  console.log(table(head('write'), writeRows));
  console.log(
    '\nRead: `ProfileReader.open(file, { backend })` and every sample of `samples()` (open, decompression and decoding included).\n',
  );
  console.log(table(head('read'), readRows));
}
