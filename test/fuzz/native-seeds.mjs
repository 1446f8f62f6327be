// Writes libFuzzer seed inputs for one target into a directory, built from the
// shared vectors and data read in place (../shared beside the checkout). Each
// harness takes a few parameter bytes before its payload (see the harness's
// header comment); this script adds them. Small hand-made seeds live in
// test/fuzz/corpus/<target>/ and are passed to libFuzzer separately.
//
//   node test/fuzz/native-seeds.mjs <target> <out-dir>
import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const shared = process.env.PROFPACK_SHARED ?? path.resolve(here, '..', '..', '..', 'shared');
const [target, outDir] = process.argv.slice(2);
if (!target || !outDir) throw new Error('usage: native-seeds.mjs <target> <out-dir>');
mkdirSync(outDir, { recursive: true });

// libFuzzer's -max_len for our runs: seeds longer than this are cut anyway.
const MAX_SEED = 64 * 1024;
let written = 0;
function emit(name, ...parts) {
  const bytes = Buffer.concat(parts.map((p) => (p instanceof Uint8Array ? p : Buffer.from(p))));
  writeFileSync(path.join(outDir, name.replace(/[^A-Za-z0-9_.-]/g, '_')), bytes.subarray(0, MAX_SEED));
  written++;
}
function files(dir, filter) {
  const full = path.join(shared, dir);
  if (!existsSync(full)) throw new Error(`shared data missing: ${full}`);
  return readdirSync(full)
    .filter(filter)
    .sort()
    .map((f) => [f, path.join(full, f)]);
}

const tachyonFiles = () => files('vectors/tachyon', (f) => f.endsWith('.bin'));

/** A vector's byte order, declared thread count and (decompressed) sample region; null when its header or zstd region is unusable. */
function sampleRegion(bytes) {
  if (bytes.length < 64) return null;
  const le = bytes[0] === 0x48;
  const compression = le ? bytes.readUInt32LE(56) : bytes.readUInt32BE(56);
  const stringOffset = Number(le ? bytes.readBigUInt64LE(40) : bytes.readBigUInt64BE(40));
  const threads = le ? bytes.readUInt32LE(36) : bytes.readUInt32BE(36);
  if (stringOffset > bytes.length || stringOffset < 64) return null;
  const region = bytes.subarray(64, stringOffset);
  if (compression === 0) return { le, threads, region };
  if (compression !== 1) return null;
  try {
    return { le, threads, region: createRequire(import.meta.url)('zstd-napi').decompress(region) };
  } catch {
    return null; // the zstd error vectors
  }
}

/** The kind-5 fixture's region (written before issue 19), whole and cut, as mode-0 seeds of the v2 harnesses. */
function kind5Seeds() {
  const fixture = readFileSync(new URL('../fixtures/v2/stacktable-kind5.tach', import.meta.url));
  const region = sampleRegion(fixture)?.region;
  if (region)
    for (const keep of [1, 0.5, 0.1])
      emit(`kind5.${keep}`, [0, 0], region.subarray(0, Math.floor(region.length * keep)));
}

/**
 * The first `samples` samples of every stack stream as a v2 harness's script: per sample the thread
 * (of 4) with its status bit, the frames kept from that thread's previous stack, then at most
 * `maxFresh` new frames, each a frame id below `frameIds`.
 */
function* stackScripts(samples, maxFresh, frameIds) {
  for (const [name, file] of files('data/stacks', (f) => f.endsWith('.stacks.json.gz'))) {
    const doc = JSON.parse(gunzipSync(readFileSync(file)));
    const previous = [[], [], [], []];
    const script = [];
    for (let i = 0; i < Math.min(samples, doc.samples.node.length); i++) {
      const t = doc.samples.thread[i] & 3;
      const outer = [];
      for (let n = doc.samples.node[i]; n >= 0; n = doc.nodes[n][0]) outer.unshift(doc.nodes[n][1]);
      let keep = 0;
      while (keep < outer.length && keep < previous[t].length && outer[keep] === previous[t][keep]) keep++;
      const fresh = outer.slice(keep, keep + maxFresh);
      script.push(
        t | ((doc.samples.status[i] ? 1 : 0) << 2) | (16 << 3),
        keep,
        fresh.length,
        ...fresh.map((f) => f % frameIds),
      );
      previous[t] = [...outer.slice(0, keep), ...fresh];
    }
    yield [name, script];
  }
}

switch (target) {
  case 'leb128': {
    // Varint-dense bytes: the Tachyon sample regions and tables (after the 64-byte header).
    for (const [name, file] of tachyonFiles()) {
      const body = readFileSync(file).subarray(64, 64 + 4096);
      for (let kind = 0; kind < 6; kind++) emit(`${name}.k${kind}`, [kind, 255, 0], body);
    }
    break;
  }
  case 'svb': {
    // byte 0: variant (0 svb1234, 1 svb0124, 2 delta), byte 1: kernel level,
    // bytes 2..5: count (LE u32), bytes 6..9: delta's previous value, then the payload.
    const index = JSON.parse(readFileSync(path.join(shared, 'vectors/svb/index.json'), 'utf8'));
    const entries = Array.isArray(index) ? index : (index.vectors ?? index.cases ?? Object.values(index));
    for (const [name, file] of files('vectors/svb', (f) => f.endsWith('.bin'))) {
      const m = /^(.*)\.(svb1234|svb0124|delta_prev(\d+))\.bin$/.exec(name);
      if (!m) continue;
      const u32 = path.join(shared, 'vectors/svb', `${m[1]}.u32`);
      const count = existsSync(u32) ? readFileSync(u32).length / 4 : 0;
      const variant = m[2] === 'svb1234' ? 0 : m[2] === 'svb0124' ? 1 : 2;
      const prev = m[3] ? Number(m[3]) >>> 0 : 0;
      const head = Buffer.alloc(10);
      head[0] = variant;
      head.writeUInt32LE(count, 2);
      head.writeUInt32LE(prev, 6);
      for (let level = 0; level < 3; level++) {
        head[1] = level;
        emit(`${name}.l${level}`, head, readFileSync(file));
      }
    }
    void entries;
    break;
  }
  case 'svb_kernels': {
    // bytes 0..1: count (LE, mod 2048), byte 2: selector (transform = s % 4,
    // 0x10 = 0124, 0x20 = encode one value per byte; prev = s * 0x01010101).
    for (const [name, file] of files('vectors/svb', (f) => f.endsWith('.bin'))) {
      const m = /^(.*)\.(svb1234|svb0124|delta_prev(\d+))\.bin$/.exec(name);
      if (!m) continue;
      const u32 = path.join(shared, 'vectors/svb', `${m[1]}.u32`);
      const count = (existsSync(u32) ? readFileSync(u32).length / 4 : 0) % 2048;
      const selector = m[2] === 'svb0124' ? 0x10 : m[2] === 'svb1234' ? 0 : 1;
      emit(`${name}`, [count & 0xff, count >> 8, selector], readFileSync(file));
      emit(`${name}.bytewise`, [count & 0xff, count >> 8, selector | 0x20], readFileSync(file));
    }
    break;
  }
  case 'pctable': {
    // byte 0: op (0 varint decode + linear round trip, 1 linear open + lookups,
    // 2 varint lookup), byte 1: quantum, bytes 2..5: size, bytes 6..9: pc, then the table.
    const head = (op, quantum, size, pc) => {
      const h = Buffer.alloc(10);
      h[0] = op;
      h[1] = quantum;
      h.writeUInt32LE(size >>> 0, 2);
      h.writeUInt32LE(pc >>> 0, 6);
      return h;
    };
    const lines = (name) => {
      let text = readFileSync(path.join(shared, 'data/pcdata', name));
      if (name.endsWith('.gz')) text = gunzipSync(text);
      return text
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    };
    for (const [name] of files('data/pcdata', (f) => /\.tables\.jsonl(\.gz)?$/.test(f))) {
      // Every 37th record: a spread of kinds and sizes without thousands of near-duplicates.
      lines(name)
        .filter((_, i) => i % 37 === 0)
        .forEach((rec) => {
          const bytes = Buffer.from(rec.b64, 'base64');
          emit(`${name}.${rec.i}.varint`, head(0, rec.quantum, rec.size, rec.size >> 1), bytes);
          emit(`${name}.${rec.i}.lookup`, head(2, rec.quantum, rec.size, rec.size >> 1), bytes);
        });
    }
    for (const [name] of files('data/pcdata', (f) => /\.linear\.jsonl(\.gz)?$/.test(f))) {
      lines(name)
        .filter((_, i) => i % 37 === 0)
        .forEach((rec) => {
          emit(
            `${name}.${rec.rec}.linear`,
            head(1, rec.quantum, rec.size, rec.size >> 1),
            Buffer.from(rec.lin, 'base64'),
          );
        });
    }
    break;
  }
  case 'tachyon_reader': {
    // Params: flags (bit 0 little-endian, bit 1 thread count given, bit 2
    // whole file), thread count, window chunk / 16, output scale. Every
    // vector whole (file mode: none and zstd, both byte orders, the error
    // vectors too), and every sample region alone (region mode; zstd ones
    // decompressed here with zstd-napi), with header fields in the file's byte order.
    for (const [name, file] of tachyonFiles()) {
      const bytes = readFileSync(file);
      emit(`${name}.file`, [4, 0, 0, 0xff], bytes);
      emit(`${name}.file.small`, [4, 0, 1, 0], bytes);
      const found = sampleRegion(bytes);
      if (found === null) continue; // the zstd error vectors: only their file-mode seeds
      const { le, threads, region } = found;
      const given = threads <= 255 ? 2 : 0;
      emit(`${name}.whole`, [(le ? 1 : 0) | given, threads & 0xff, 0, 0xff], region);
      emit(`${name}.small`, [(le ? 1 : 0) | given, threads & 0xff, 1, 0], region);
    }
    break;
  }
  case 'tachyon_recover': {
    // Params: flags (bit 0 little-endian), a u16 cut. Every uncompressed
    // vector's sample region, whole and cut at a few points, as a killed
    // writer leaves it (zstd regions are decompressed by then: the harness sees records).
    for (const [name, file] of tachyonFiles()) {
      const found = sampleRegion(readFileSync(file));
      if (found === null) continue;
      const { le, region } = found;
      for (const keep of [1, 0.9, 0.5, 0.13]) {
        const cut = Math.floor(region.length * keep);
        emit(`${name}.${keep}`, [le ? 1 : 0, cut & 0xff, (cut >> 8) & 0xff], region.subarray(0, cut));
      }
    }
    break;
  }
  case 'tachyon_v2': {
    // byte 0: op (0 decode a region, 1 round trip; bit 1: predict blocks), byte 1: block size − 1.
    // op 0: the kind-5 fixture's region, whole and cut.
    kind5Seeds();
    // op 1: the first samples of every stack stream as the harness's script (thread, kept frames, new frames).
    for (const [name, script] of stackScripts(1500, 39, 64)) {
      emit(`${name}.kind6`, [1, 255], script);
      emit(`${name}.predict`, [3, 15], script);
    }
    // op 2: model-section value columns (docs/format-v2.md §8): counts of 1, and wall-time gaps around 10 ms.
    emit('values.ones', [4, 200], [0x02, ...new Array(199).fill(0)]);
    const gaps = [];
    for (let i = 0; i < 120; i++) gaps.push(...[(i * 37) % 200, 0x80 | ((i * 11) % 128), 0x09]);
    emit('values.gaps', [4, 120], gaps);
    break;
  }
  case 'tachyon_v2_region': {
    // byte 0: mode (0 a region, 1 an encoded script with patches, bit 2: kind-4 blocks; 2 a value column).
    kind5Seeds();
    // Mode 1: 64 samples of every stack stream, blocks of 16, no patch (the mutator adds them).
    for (const [name, script] of stackScripts(64, 23, 48)) {
      emit(`${name}.kind6`, [1, 15, 0], script);
      emit(`${name}.predict`, [5, 15, 0], script);
    }
    emit('values.ones', [2, 200], [0x02, ...new Array(199).fill(0)]);
    break;
  }
  case 'tachyon_heap':
    // No shared vector holds a heap section: the seeds are the records of sections the library's writer made from
    // random plans, committed in test/fuzz/corpus/tachyon_heap/ (plan<n>: frame count, default limits, the chunk cuts).
    break;
  default:
    throw new Error(`no seeds for target ${target}`);
}
console.error(`fuzz seeds: ${written} inputs for ${target} in ${outDir}`);
