// npm run bench -- varint [--values N] [--rounds R]
// 1 M u32 values (70 % < 2^7, 25 % in [2^7, 2^14), 5 % in [2^14, 2^32), shuffled):
// batch decode and encode with profpack's native and JS twins, against
// uint8-varint and @bufbuild/protobuf measured in the same run.
import { createRequire } from 'node:module';
import { interleave, machine, table } from './_harness.mjs';

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
const rounds = arg('rounds', 15);
if (backend.name !== 'native' || !varintNative) throw new Error('the varint benchmark needs the native addon');

// A seeded generator, so every run measures the same data.
let seed = 0x9e3779b9;
const rand = () => ((seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x297a2d39) >>> 0) / 2 ** 32);
const values = new Uint32Array(N);
for (let i = 0; i < N; i++) {
  const r = rand();
  values[i] = r < 0.7 ? Math.floor(rand() * 2 ** 7) : r < 0.95 ? 2 ** 7 + Math.floor(rand() * (2 ** 14 - 2 ** 7)) : 2 ** 14 + Math.floor(rand() * (2 ** 32 - 2 ** 14));
}
for (let i = N - 1; i > 0; i--) {
  const j = Math.floor(rand() * (i + 1));
  const t = values[i];
  values[i] = values[j];
  values[j] = t;
}
const bytes = varint.encodeU32Many(values);
const out = new Uint32Array(N);
const scratch = new Uint8Array(N * 5);
let sink = 0;

const check = (decoded) => {
  for (let i = 0; i < N; i += 9973) if (decoded[i] !== values[i]) throw new Error('benchmark decoded wrong values');
};

const decode = {
  'profpack native batch': () => {
    varintNative.decodeMany(VarintKind.U32, bytes, 0, N, out);
    sink ^= out[N - 1];
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
  'profpack native batch': () => {
    sink ^= varintNative.encodeMany(VarintKind.U32, values, scratch, 0);
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
  f();
  check(out);
}

const d = interleave(decode, { rounds });
const e = interleave(encode, { rounds });
const fmt = (sec) => ((sec * 1e9) / N).toFixed(2);
const rows = Object.keys(decode).map((name) => [
  name,
  fmt(d[name]),
  (d['uint8-varint'] / d[name]).toFixed(2) + '×',
  fmt(e[name]),
  (e['uint8-varint'] / e[name]).toFixed(2) + '×',
]);
console.log(`varint: ${N.toLocaleString('en')} u32 values (${(bytes.length / N).toFixed(3)} bytes/value), ${rounds} interleaved rounds, medians`);
console.log(machine());
console.log(table(['implementation', 'decode ns/value', 'decode vs uint8-varint', 'encode ns/value', 'encode vs uint8-varint'], rows));
const nativeRatio = d['uint8-varint'] / d['profpack native batch'];
const jsRatio = d['uint8-varint'] / d['profpack JS twin batch'];
console.log(`goal native batch decode ≥ 3× uint8-varint: ${nativeRatio.toFixed(2)}× ${nativeRatio >= 3 ? 'met' : 'NOT met'}`);
console.log(`goal JS twin decode ≥ 1.0× uint8-varint: ${jsRatio.toFixed(2)}× ${jsRatio >= 1 ? 'met' : 'NOT met'}`);
if (sink === 0.5) console.log(sink);
