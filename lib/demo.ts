/**
 * `npm run demo`: round-trips the integer codecs on an embedded, profile-like
 * data set and prints the sizes. (The profile recorder of a later issue
 * replaces this as the README's main job.)
 */
import { backend } from './backend';
import * as varint from './varint/index';

/** A deterministic profile-like data set: what a sampling profiler stores per sample. */
export function embeddedDataset(samples = 200_000): { timestampDeltasUs: BigUint64Array; frameIndices: Uint32Array; lineDeltas: Int32Array } {
  let seed = 0x2545f491;
  const next = (): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const timestampDeltasUs = new BigUint64Array(samples);
  const frameIndices = new Uint32Array(samples * 4);
  const lineDeltas = new Int32Array(samples);
  for (let i = 0; i < samples; i++) {
    // ~1 kHz sampling with jitter, and an occasional long pause.
    timestampDeltasUs[i] = BigInt(next() < 0.01 ? 50_000 + Math.floor(next() * 1e6) : 900 + Math.floor(next() * 200));
    for (let k = 0; k < 4; k++) frameIndices[i * 4 + k] = Math.floor(next() ** 3 * 5_000); // a few hot frames, a long tail
    lineDeltas[i] = Math.round((next() - 0.5) * 80);
  }
  return { timestampDeltasUs, frameIndices, lineDeltas };
}

function equal(a: ArrayLike<unknown>, b: ArrayLike<unknown>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function runDemo(log: (line: string) => void = console.log): void {
  const data = embeddedDataset();
  log(`profpack ${backend.name} backend${backend.reason ? ` (${backend.reason})` : ''}`);
  log(`embedded data set: ${data.timestampDeltasUs.length.toLocaleString('en')} samples`);
  const rows: Array<[string, number, number]> = [];

  const t = varint.encodeU64Many(data.timestampDeltasUs);
  if (!equal(varint.decodeU64Many(t, 0, data.timestampDeltasUs.length).values, data.timestampDeltasUs)) throw new Error('u64 round trip failed');
  rows.push(['timestamp deltas (u64 LEB128)', data.timestampDeltasUs.byteLength, t.length]);

  const f = varint.encodeU32Many(data.frameIndices);
  if (!equal(varint.decodeU32Many(f, 0, data.frameIndices.length).values, data.frameIndices)) throw new Error('u32 round trip failed');
  rows.push(['frame indices (u32 LEB128)', data.frameIndices.byteLength, f.length]);

  const l = varint.encodeZigzag32Many(data.lineDeltas);
  if (!equal(varint.decodeZigzag32Many(l, 0, data.lineDeltas.length).values, data.lineDeltas)) throw new Error('zigzag round trip failed');
  rows.push(['line deltas (zigzag LEB128)', data.lineDeltas.byteLength, l.length]);

  const width = Math.max(...rows.map((r) => r[0].length));
  log(`${'stream'.padEnd(width)}  ${'fixed bytes'.padStart(12)}  ${'LEB128 bytes'.padStart(12)}  ratio`);
  for (const [name, fixed, packed] of rows) {
    log(`${name.padEnd(width)}  ${fixed.toLocaleString('en').padStart(12)}  ${packed.toLocaleString('en').padStart(12)}  ${(packed / fixed).toFixed(3)}`);
  }
  log('all round trips exact');
}

if (require.main === module) runDemo();
