// npm run bench -- varint [--values N] [--rounds R]
// 1 M u32 values in two shapes: "mixed" (70 % < 2^7, 25 % in [2^7, 2^14),
// 5 % in [2^14, 2^32), shuffled), "uniform" (uniform 32-bit, ~94 % 5-byte
// varints) and "small" (every value < 2^7: ids and deltas, one byte each). Batch decode through the public call (varint.decodeU32Many with
// an output array, native) and the JS twin, and batch encode, against
// uint8-varint and @bufbuild/protobuf in the same interleaved rounds. Ratios
// are medians of per-round ratios (candidate and peer ran moments apart).
import { createRequire } from 'node:module';
import os from 'node:os';
import { rng } from '../test/support/rng.mjs';
import { interleaveRounds, machine, median, table } from './_harness.mjs';

const require = createRequire(import.meta.url);
process.env.PROFPACK_BACKEND ??= 'native';
const { varint, backend } = require('../dist/index.js');
const js = require('../dist/varint/js.js');
const { VarintKind } = require('../dist/varint/kinds.js');
const { varintNative } = require('../dist/varint/native.js');
const uv = await import('uint8-varint');
const { BinaryReader, BinaryWriter } = await import('@bufbuild/protobuf/wire');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const N = arg('values', 1_000_000);
const rounds = arg('rounds', 21);
if (backend.name !== 'native' || !varintNative) throw new Error('the varint benchmark needs the native addon');

// A seeded generator, so every run measures the same data.
const rand = rng(0x9e3779b9);
const shapes = {
  mixed: () => {
    const r = rand();
    return r < 0.7
      ? Math.floor(rand() * 2 ** 7)
      : r < 0.95
        ? 2 ** 7 + Math.floor(rand() * (2 ** 14 - 2 ** 7))
        : 2 ** 14 + Math.floor(rand() * (2 ** 32 - 2 ** 14));
  },
  uniform: () => Math.floor(rand() * 2 ** 32),
  small: () => Math.floor(rand() * 2 ** 7),
};

console.log(
  `varint: ${N.toLocaleString('en')} u32 values per shape, ${rounds} interleaved rounds; load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log(machine());
const goals = [];
for (const [shape, draw] of Object.entries(shapes)) {
  const values = new Uint32Array(N);
  for (let i = 0; i < N; i++) values[i] = draw();
  for (let i = N - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const t = values[i];
    values[i] = values[j];
    values[j] = t;
  }
  runShape(shape, values);
}
console.log(goals.join('\n'));

function runShape(shape, values) {
  const bytes = varint.encodeU32Many(values);
  const out = new Uint32Array(N);
  const scratch = new Uint8Array(N * 5);
  let sink = 0;
  let fresh = out;

  const check = (decoded) => {
    for (let i = 0; i < N; i += 9973) if (decoded[i] !== values[i]) throw new Error('benchmark decoded wrong values');
  };

  const decode = {
    'profpack native, public call': () => {
      sink ^= varint.decodeU32Many(bytes, 0, N, out).end;
    },
    // The allocating form: a fresh Uint32Array per call (the peers below write into \`out\`).
    'profpack native, allocating': () => {
      fresh = varint.decodeU32Many(bytes, 0, N).values;
      sink ^= fresh[N - 1];
    },
    'profpack JS twin batch': () => {
      js.decodeMany(VarintKind.U32, bytes, 0, N, out);
      sink ^= out[N - 1];
    },
    'uint8-varint': () => {
      let pos = 0;
      for (let i = 0; i < N; i++) {
        const v = uv.decode(bytes, pos);
        out[i] = v;
        pos += uv.encodingLength(v);
      }
      sink ^= out[N - 1];
    },
    '@bufbuild/protobuf': () => {
      const reader = new BinaryReader(bytes);
      for (let i = 0; i < N; i++) out[i] = reader.uint32();
      sink ^= out[N - 1];
    },
  };
  const encode = {
    'profpack native, allocating': () => {
      sink ^= varint.encodeU32Many(values).length;
    },
    'profpack native, public call': () => {
      sink ^= varint.encodeU32ManyInto(values, scratch, 0);
    },
    'profpack JS twin batch': () => {
      sink ^= js.encodeMany(VarintKind.U32, values, scratch, 0);
    },
    'uint8-varint': () => {
      let pos = 0;
      for (let i = 0; i < N; i++) {
        uv.encode(values[i], scratch, pos);
        pos += uv.encodingLength(values[i]);
      }
      sink ^= pos;
    },
    '@bufbuild/protobuf': () => {
      const writer = new BinaryWriter();
      for (let i = 0; i < N; i++) writer.uint32(values[i]);
      sink ^= writer.finish().length;
    },
  };
  // Every decoder must really decode before it is timed.
  for (const f of Object.values(decode)) {
    out.fill(0);
    fresh = out;
    f();
    check(fresh);
  }

  const d = interleaveRounds(decode, { rounds });
  const e = interleaveRounds(encode, { rounds });
  const ns = (times) => ((median(times) * 1e9) / N).toFixed(2);
  // Median over rounds of peer time / candidate time: > 1 means faster than uint8-varint.
  const vs = (times, name) => median(times[name].map((t, i) => times['uint8-varint'][i] / t));
  const rows = Object.keys(decode).map((name) => [
    name,
    ns(d[name]),
    vs(d, name).toFixed(2) + '×',
    ns(e[name]),
    vs(e, name).toFixed(2) + '×',
  ]);
  console.log(`\n${shape}: ${(bytes.length / N).toFixed(3)} bytes/value`);
  console.log(
    table(
      ['implementation', 'decode ns/value', 'decode vs uint8-varint', 'encode ns/value', 'encode vs uint8-varint'],
      rows,
    ),
  );
  const nativeRatio = vs(d, 'profpack native, public call');
  const allocatingRatio = vs(d, 'profpack native, allocating');
  const jsRatio = vs(d, 'profpack JS twin batch');
  goals.push(
    `goal ${shape}: native decodeU32Many ≥ 3× uint8-varint: ${nativeRatio.toFixed(2)}× ${nativeRatio >= 3 ? 'met' : 'NOT met'}; ` +
      `allocating ${allocatingRatio.toFixed(2)}× ${allocatingRatio >= 3 ? 'met' : 'NOT met'}; JS twin ≥ 1.2×: ${jsRatio.toFixed(2)}× ${jsRatio >= 1.2 ? 'met' : 'NOT met'}`,
  );
  if (sink === 0.5) console.log(sink);
}
