// Stream VByte throughput (issue 4): encode and decode at every kernel level,
// the JS twin, and uint8-varint LEB128 on the same values, against a
// Buffer.copy of the 4n decoded bytes (memcpy), all measured in the same
// interleaved rounds. Million uint32 per second, medians.
//
//   npm run bench -- svb              1 M and 16 M values, every distribution
//   npm run bench -- svb 1m           1 M only
//   npm run bench -- svb threshold    per-call cost of small batches, native vs JS
//   npm run bench -- svb peer         the public calls against lemire/streamvbyte's C
//                                     (../shared/tools/streamvbyte-ref), same data, same run
//
// Kernels are timed through the codec contract (lib/svb/modes.ts) with
// preallocated buffers, so allocation is not in the numbers.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeUint8Array, encodeUint8Array, encodingLength } from 'uint8-varint';
import { interleave, interleaveRounds, machine, median, table } from './_harness.mjs';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const { backend } = require('../dist/backend.js');
const { jsCodec } = require('../dist/svb/js.js');
const { svbNative } = require('../dist/svb/native.js');
const { Mode } = require('../dist/svb/modes.js');

if (svbNative === null) {
  console.error(`the native addon did not load (${backend.reason}); build it with npx node-gyp rebuild`);
  process.exit(1);
}
const levels = svbNative.kernelLevels();
const defaultLevel = svbNative.kernelLevel();

// xorshift32 with a fixed seed: the same data on every run.
function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
}

// The distributions of shared/notes/streamvbyte-measurements.md section 1.
const distributions = {
  u8: (n, r) => Uint32Array.from({ length: n }, () => r() & 0xff),
  u16: (n, r) => Uint32Array.from({ length: n }, () => r() & 0xffff),
  u32: (n, r) => Uint32Array.from({ length: n }, () => r()),
  // Running sum of Geometric(p = 0.1) steps (mean 9).
  sortedgeo: (n, r) => {
    const out = new Uint32Array(n);
    let acc = 0;
    for (let i = 0; i < n; i++) {
      acc = (acc + Math.floor(Math.log((r() + 1) / 4294967297) / Math.log(0.9))) >>> 0;
      out[i] = acc;
    }
    return out;
  },
  // µs timestamps: gaps of 1000 ± 150, plus 0..50 ms on 0.5% of gaps; wraps mod 2^32.
  timestamps: (n, r) => {
    const out = new Uint32Array(n);
    let t = 0;
    for (let i = 0; i < n; i++) {
      let gap = 850 + (r() % 301);
      if (r() % 1000 < 5) gap += r() % 50001;
      t = (t + gap) >>> 0;
      out[i] = t;
    }
    return out;
  },
};
// Unsorted values against both plain layouts; sorted ones against delta coding.
const plainCodecs = [
  ['1234', Mode.Plain1234],
  ['0124', Mode.Plain0124],
];
const deltaCodecs = [
  ['1234', Mode.Plain1234],
  ['delta', Mode.Delta1234],
];
const codecsOf = {
  u8: plainCodecs,
  u16: plainCodecs,
  u32: plainCodecs,
  sortedgeo: deltaCodecs,
  timestamps: deltaCodecs,
};

/** Repetitions so that one timed unit lasts about `target` seconds. */
function calibrate(fn, target) {
  const t0 = process.hrtime.bigint();
  fn();
  const dt = Number(process.hrtime.bigint() - t0) / 1e9;
  return Math.max(1, Math.ceil(target / Math.max(dt, 1e-6)));
}

function repeated(fn, target) {
  fn(); // warm
  const reps = calibrate(fn, target);
  return {
    reps,
    run: () => {
      for (let i = 0; i < reps; i++) fn();
    },
  };
}

function atLevel(level, fn) {
  return () => {
    svbNative.setKernelLevel(level);
    fn();
  };
}

const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const ratio = (a, b) => (a / b).toFixed(2);

function throughput(args) {
  const only = args.find((a) => /^(1m|16m)$/i.test(a));
  const sizes = only ? [only.toLowerCase() === '1m' ? 1 << 20 : 1 << 24] : [1 << 20, 1 << 24];
  const decodeRows = [];
  const encodeRows = [];
  const goals = [];
  for (const n of sizes) {
    const big = n > 1 << 20;
    // Short units and many rounds at 1M: on a loaded machine a unit longer than
    // a scheduler slice is almost always interrupted. 16M calls are long anyway.
    const rounds = big ? 5 : 31;
    const target = big ? 0.03 : 0.003;
    for (const [dist, make] of Object.entries(distributions)) {
      const values = make(n, rng(0x9e3779b9 ^ n ^ dist.length));
      const cases = {};
      const units = {};
      const add = (name, fn) => {
        const r = repeated(fn, target);
        cases[name] = r.run;
        units[name] = r.reps * n;
      };
      // Baselines.
      const src = Buffer.from(values.buffer, values.byteOffset, values.byteLength);
      const dst = Buffer.alloc(src.length);
      add('memcpy', () => src.copy(dst));
      const leb = new Uint8Array(5 * n);
      let lebLength = 0;
      add('varint/enc', () => {
        let off = 0;
        for (let i = 0; i < n; i++) {
          const v = values[i];
          encodeUint8Array(v, leb, off);
          off += encodingLength(v);
        }
        lebLength = off;
      });
      const lebOut = new Uint32Array(n);
      add('varint/dec', () => {
        let off = 0;
        for (let i = 0; i < n; i++) {
          const v = decodeUint8Array(leb, off);
          lebOut[i] = v;
          off += encodingLength(v);
        }
      });
      if (lebOut.some((v, i) => v !== values[i])) throw new Error('uint8-varint round trip failed');
      const streams = {};
      for (const [codec, mode] of codecsOf[dist]) {
        const out = new Uint8Array(Math.ceil(n / 4) + 4 * n);
        const length = jsCodec.encode(values, out, mode, 0);
        const stream = out.slice(0, length);
        streams[codec] = stream;
        const decoded = new Uint32Array(n);
        for (const level of levels) {
          svbNative.setKernelLevel(level);
          const check = new Uint8Array(out.length);
          if (!Buffer.from(check.buffer, 0, svbNative.encode(values, check, mode, 0)).equals(stream))
            throw new Error(`${level} ${codec} encode differs`);
          svbNative.decode(stream, n, decoded, mode, 0);
          if (!Buffer.from(decoded.buffer).equals(src)) throw new Error(`${level} ${codec} decode differs`);
          add(
            `${codec}/${level}/enc`,
            atLevel(level, () => svbNative.encode(values, out, mode, 0)),
          );
          add(
            `${codec}/${level}/dec`,
            atLevel(level, () => svbNative.decode(stream, n, decoded, mode, 0)),
          );
        }
        add(`${codec}/js/enc`, () => jsCodec.encode(values, out, mode, 0));
        add(`${codec}/js/dec`, () => jsCodec.decode(stream, n, decoded, mode, 0));
      }
      const times = interleaveRounds(cases, { rounds, warmup: 1 });
      const mips = (name) => units[name] / median(times[name]) / 1e6;
      const best = (name) => units[name] / Math.min(...times[name]) / 1e6;
      const cell = (name) => `${fmt(mips(name))} (${fmt(best(name))})`;
      // Median over rounds of (throughput of a) / (throughput of b), and the ratio of the best rounds.
      const pairRatio = (a, b) => median(times[a].map((t, i) => units[a] / t / (units[b] / times[b][i])));
      const ratioCell = (a, b) => `${pairRatio(a, b).toFixed(2)} (${(best(a) / best(b)).toFixed(2)})`;
      const label = big ? '16M' : '1M';
      for (const [codec] of codecsOf[dist]) {
        const bpi = (streams[codec].length / n).toFixed(3);
        for (const [op, rows] of [
          ['dec', decodeRows],
          ['enc', encodeRows],
        ]) {
          rows.push([
            label,
            dist,
            codec,
            bpi,
            ...levels.map((l) => cell(`${codec}/${l}/${op}`)),
            cell(`${codec}/js/${op}`),
            codec === '1234' ? cell(`varint/${op}`) : '',
            cell('memcpy'),
            ...levels.filter((l) => l !== 'scalar').map((l) => ratioCell(`${codec}/${l}/${op}`, 'memcpy')),
            codec === '1234' ? ratioCell(`${codec}/js/${op}`, `varint/${op}`) : '',
          ]);
          if (!big && codec === '1234') {
            const simd = `${codec}/${defaultLevel}/${op}`;
            const js = `${codec}/js/${op}`;
            goals.push({
              op,
              dist,
              simd: pairRatio(simd, 'memcpy'),
              simdBest: best(simd) / best('memcpy'),
              js: pairRatio(js, `varint/${op}`),
              jsBest: best(js) / best(`varint/${op}`),
            });
          }
        }
      }
      console.error(`done ${n} ${dist} (uint8-varint ${(lebLength / n).toFixed(3)} B/int)`);
    }
  }
  const header = (op) => [
    'n',
    'data',
    'codec',
    'B/int',
    ...levels.map((l) => `${l} ${op}`),
    `JS ${op}`,
    `uint8-varint ${op}`,
    'memcpy',
    ...levels.filter((l) => l !== 'scalar').map((l) => `${l}/memcpy`),
    'JS/uint8-varint',
  ];
  console.log(`\n${machine()}; kernel level chosen at load: ${defaultLevel}\n`);
  console.log(
    'Decode, million uint32/s: median of interleaved rounds (best round). Ratios: median of per-round ratios (ratio of best rounds).\n',
  );
  console.log(table(header('dec'), decodeRows));
  console.log('\nEncode, million uint32/s:\n');
  console.log(table(header('enc'), encodeRows));
  if (goals.length > 0) {
    const dec = goals.filter((g) => g.op === 'dec');
    const enc = goals.filter((g) => g.op === 'enc');
    console.log(`\nGoals at 1M, 1234 layout, ${defaultLevel} kernels (median over distributions; min..max):`);
    const range = (list, key) =>
      `${median(list.map((g) => g[key])).toFixed(2)} (${Math.min(...list.map((g) => g[key])).toFixed(2)}..${Math.max(...list.map((g) => g[key])).toFixed(2)})`;
    const summary = (list, key) => `${range(list, key)}; best rounds: ${range(list, `${key}Best`)}`;
    console.log(`- SIMD decode / memcpy: ${summary(dec, 'simd')} (goal >= 0.75)`);
    console.log(`- SIMD encode / memcpy: ${summary(enc, 'simd')} (goal >= 0.5)`);
    console.log(`- JS decode / uint8-varint decode: ${summary(dec, 'js')} (goal >= 1.0)`);
  }
}

// Per-call cost of small batches through the codec contract, native (default
// level) vs the JS twin. 4096 different streams per size are cycled so the
// branch predictor cannot learn one input.
function threshold() {
  const sizes = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 512, 1024];
  const pool = 4096;
  const r = rng(12345);
  // The LEB mix of the measurements note: 70% < 2^7, 25% < 2^14, 5% < 2^32.
  const mixValue = () => {
    const p = r() % 100;
    return p < 70 ? r() & 0x7f : p < 95 ? 0x80 + (r() % (0x4000 - 0x80)) : r();
  };
  const rows = [];
  for (const n of sizes) {
    const inputs = Array.from({ length: pool }, () => Uint32Array.from({ length: n }, mixValue));
    const streams = inputs.map((v) => {
      const out = new Uint8Array(Math.ceil(n / 4) + 4 * n);
      return out.slice(0, jsCodec.encode(v, out, Mode.Plain1234, 0));
    });
    const out = new Uint8Array(Math.ceil(n / 4) + 4 * n);
    const decoded = new Uint32Array(n);
    const calls = Math.max(pool, Math.ceil(2_000_000 / n));
    const loop = (fn) => () => {
      for (let i = 0; i < calls; i++) fn(i & (pool - 1));
    };
    const seconds = interleave(
      {
        nativeDec: loop((i) => svbNative.decode(streams[i], n, decoded, Mode.Plain1234, 0)),
        jsDec: loop((i) => jsCodec.decode(streams[i], n, decoded, Mode.Plain1234, 0)),
        nativeEnc: loop((i) => svbNative.encode(inputs[i], out, Mode.Plain1234, 0)),
        jsEnc: loop((i) => jsCodec.encode(inputs[i], out, Mode.Plain1234, 0)),
      },
      { rounds: 9, warmup: 2 },
    );
    const ns = (k) => (seconds[k] / calls) * 1e9;
    rows.push([
      n,
      ns('nativeDec').toFixed(0),
      ns('jsDec').toFixed(0),
      ratio(ns('jsDec'), ns('nativeDec')),
      ns('nativeEnc').toFixed(0),
      ns('jsEnc').toFixed(0),
      ratio(ns('jsEnc'), ns('nativeEnc')),
    ]);
    console.error(`done n=${n}`);
  }
  console.log(`\n${machine()}; native kernels: ${defaultLevel}\n`);
  console.log('ns per call (median of 9 interleaved rounds); JS/native > 1 means native is faster:\n');
  console.log(table(['n', 'native decode', 'JS decode', 'JS/native', 'native encode', 'JS encode', 'JS/native'], rows));
}

// The public calls (svb.decode, decodeInto, encode, encodeInto, the delta
// forms) against the reference C library's own timing tool on the same
// values: its process and our calls alternate round by round, each reports
// the median ns of one whole call over `calls` calls, and the ratio is the
// median over rounds of (C ns / profpack ns): >= 1 means as fast as the C.
// The JS twin is timed through the codec contract the public call dispatches
// to under PROFPACK_BACKEND=js.
function peer() {
  const build = path.resolve(here, '..', '..', 'shared', 'tools', 'streamvbyte-ref', 'build.sh');
  const bin = spawnSync('bash', [build], { encoding: 'utf8' }).stdout.trim();
  if (!bin) throw new Error(`could not build the reference: bash ${build}`);
  const { svb } = require('../dist/index.js');
  const n = 1 << 20;
  const rounds = 11;
  const calls = 11;
  const dir = mkdtempSync(path.join(tmpdir(), 'profpack-svb-peer-'));
  const medianCall = (fn) => {
    const t = [];
    for (let i = 0; i < calls; i++) {
      const t0 = process.hrtime.bigint();
      fn();
      t.push(Number(process.hrtime.bigint() - t0));
    }
    return median(t);
  };
  // [our label, the C tool's key, our call]
  const rows = [];
  const goals = [];
  for (const dist of ['u8', 'u16', 'u32', 'timestamps']) {
    const values = distributions[dist](n, rng(0x9e3779b9 ^ n ^ dist.length));
    const file = path.join(dir, `${dist}.u32`);
    writeFileSync(file, Buffer.from(values.buffer, values.byteOffset, values.byteLength));
    const stream = svb.encode(values);
    const deltaStream = svb.deltaEncode(values);
    const out = new Uint8Array(svb.maxEncodedLength(n));
    const decoded = new Uint32Array(n);
    if (!Buffer.from(svb.decode(stream, n).buffer).equals(Buffer.from(values.buffer)))
      throw new Error('decode differs');
    const jsOut = new Uint8Array(out.length);
    const cases = [
      ['svb.decode (allocates)', 'decode_ns', () => svb.decode(stream, n)],
      ['svb.decodeInto', 'decode_ns', () => svb.decodeInto(stream, n, decoded)],
      ['svb.encode (allocates)', 'encode_ns', () => svb.encode(values)],
      ['svb.encodeInto', 'encode_ns', () => svb.encodeInto(values, out)],
      ['svb.deltaDecode (allocates)', 'deltaDecode_ns', () => svb.deltaDecode(deltaStream, n)],
      ['svb.deltaDecodeInto', 'deltaDecode_ns', () => svb.deltaDecodeInto(deltaStream, n, decoded)],
      ['svb.deltaEncodeInto', 'deltaEncode_ns', () => svb.deltaEncodeInto(values, out)],
      ['JS twin decode', 'decode_ns', () => jsCodec.decode(stream, n, decoded, Mode.Plain1234, 0)],
      ['JS twin encode', 'encode_ns', () => jsCodec.encode(values, jsOut, Mode.Plain1234, 0)],
      ['JS twin deltaDecode', 'deltaDecode_ns', () => jsCodec.decode(deltaStream, n, decoded, Mode.Delta1234, 0)],
    ];
    // Warm enough for the optimizing compiler, which runs on a background thread a loaded machine starves.
    for (let w = 0; w < 8; w++) for (const [, , fn] of cases) fn();
    const ratios = cases.map(() => []);
    const ours = cases.map(() => []);
    const theirs = cases.map(() => []);
    for (let r = 0; r < rounds; r++) {
      const runC = () => JSON.parse(execFileSync(bin, [file, String(calls)], { encoding: 'utf8' }));
      let c = r % 2 === 0 ? runC() : null;
      // No forced gc() here: on this loaded machine a full GC made V8 drop the JS
      // twin's optimized code, and the next calls measured re-optimization (bench read saw the same).
      const mine = cases.map(([, , fn]) => medianCall(fn));
      c ??= runC();
      cases.forEach(([, key], k) => {
        ratios[k].push(c[key] / mine[k]);
        ours[k].push(mine[k]);
        theirs[k].push(c[key]);
      });
    }
    cases.forEach(([label, key], k) => {
      const ratio = median(ratios[k]);
      rows.push([
        dist,
        label,
        key.replace('_ns', ''),
        (median(ours[k]) / 1e3).toFixed(0),
        (median(theirs[k]) / 1e3).toFixed(0),
        `${ratio.toFixed(2)} (${Math.min(...ratios[k]).toFixed(2)}..${Math.max(...ratios[k]).toFixed(2)})`,
      ]);
      goals.push({ dist, label, ratio });
    });
    console.error(`done ${dist}`);
  }
  rmSync(dir, { recursive: true, force: true });
  console.log(
    `\n${machine()}; native kernels: ${defaultLevel}; the C reference: SSE4.1 build; load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}\n`,
  );
  console.log(
    `${n} u32 per call; µs per call are medians of ${calls} calls per round; ratio = median over ${rounds} alternating rounds of C ns / profpack ns (min..max).\n`,
  );
  console.log(table(['data', 'profpack call', 'C call', 'profpack µs', 'C µs', 'C / profpack'], rows));
  const worst = (label) => Math.min(...goals.filter((g) => g.label === label).map((g) => g.ratio)).toFixed(2);
  console.log('\nGoals (worst distribution): decode >= 0.9x, encode >= 0.8x through the public call; JS >= 0.2x');
  for (const label of [...new Set(goals.map((g) => g.label))]) console.log(`- ${label}: ${worst(label)}`);
}

const args = process.argv.slice(2);
if (args.includes('threshold')) threshold();
else if (args.includes('peer')) peer();
else throughput(args);
