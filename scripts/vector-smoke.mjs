// Every shared Tachyon and Stream VByte vector through an installed profpack
// (as users get it: the package's dist/ and its prebuild), on both backends:
//  - Stream VByte: each reference stream encodes and decodes byte for byte;
//  - Tachyon: each vector read from its path and from a buffer agrees with
//    CPython 3.15's dump (*.expected.json: verdict, info, every sample), and
//    each accepted one written again by ProfileWriter (same compression) and
//    read back gives the same samples;
//  - native only: a mapped file that shrinks under a read gives
//    ERR_TACHYON_FILE_CHANGED (with --shrink-handshake DIR, the shrinking is
//    done by another process that waits for DIR/mapped and then writes
//    DIR/truncated: Windows refuses to truncate a mapped file itself).
// --svb-only stops after Stream VByte (with PROFPACK_SIMD=sse41|scalar: the
// kernels a CPU without AVX2 would run). Writes its report to --out (under Wine a Windows process cannot write to a
// host pipe); the last line is "vector-smoke: ok" or "vector-smoke: FAIL ...".
//   node scripts/vector-smoke.mjs --package node_modules/profpack --shared ../shared --out report.txt
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  openSync,
  closeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const args = {};
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--child' || a === '--svb-only') args[a.slice(2)] = true;
  else args[a.replace(/^--/, '')] = process.argv[++i];
}
const pkg = path.resolve(args.package ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const shared = path.resolve(args.shared ?? path.join(pkg, '..', 'shared'));
const out = path.resolve(args.out ?? 'vector-smoke.txt');

/**
 * JSON.parse keeping integers beyond 2^53 exact: such literals (16+ digits
 * right after ':', '[' or ',') come back as strings, compared with the
 * dump's bigints by value. (Node 20 has no JSON.parse source text.)
 */
function parseExact(text) {
  return JSON.parse(text.replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '$1"$2"'));
}

const integer = (x) =>
  typeof x === 'bigint' ||
  (typeof x === 'number' && Number.isInteger(x)) ||
  (typeof x === 'string' && /^-?\d+$/.test(x));

/** Equal as JSON values: integers by value whatever their type (number, bigint, long literal), key order aside. */
function same(a, b) {
  if (
    (typeof a === 'bigint' || typeof b === 'bigint' || typeof a === 'string' || typeof b === 'string') &&
    integer(a) &&
    integer(b)
  ) {
    return typeof a === typeof b ? a === b : BigInt(a) === BigInt(b);
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return isDeepStrictEqual(a, b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => same(a[k], b[k]));
}

function child() {
  const require = createRequire(import.meta.url);
  const p = require(path.join(pkg, 'dist', 'index.js'));
  const { dumpProfile } = require(path.join(pkg, 'dist', 'tachyon', 'read', 'dump.js'));
  const wanted = process.env.PROFPACK_BACKEND;
  const failures = [];
  const fail = (what) => {
    failures.push(what);
    if (failures.length > 20) throw new Error(failures.join('\n'));
  };
  if (p.backend.name !== wanted)
    throw new Error(`backend ${p.backend.name}, wanted ${wanted}: ${p.backend.reason ?? ''}`);
  const forced = process.env.PROFPACK_SIMD;
  if (wanted === 'native' && forced && forced !== 'auto' && p.backend.features.simd !== forced)
    throw new Error(`PROFPACK_SIMD=${forced} but the kernels are ${p.backend.features.simd}`);
  const lines = [
    `backend ${p.backend.name}${wanted === 'native' ? ` simd ${p.backend.features.simd} mmap ${p.backend.features.mmap}` : ''} on Node ${process.version} ${process.platform}-${process.arch}`,
  ];

  // Stream VByte
  const svbDir = path.join(shared, 'vectors', 'svb');
  const index = JSON.parse(readFileSync(path.join(svbDir, 'index.json'), 'utf8'));
  const bytesOf = (ref) => {
    const b = new Uint8Array(readFileSync(path.join(svbDir, ref.file)));
    if (b.length !== ref.bytes || createHash('sha256').update(b).digest('hex') !== ref.sha256)
      fail(`${ref.file}: not the file index.json describes`);
    return b;
  };
  const sameBytes = (a, b) =>
    Buffer.compare(
      Buffer.from(a.buffer, a.byteOffset, a.byteLength),
      Buffer.from(b.buffer, b.byteOffset, b.byteLength),
    ) === 0;
  let streams = 0;
  for (const v of index.vectors) {
    const input = bytesOf(v.input);
    const unsigned = new Uint32Array(input.slice().buffer, 0, v.count);
    const signed = new Int32Array(unsigned.buffer, 0, v.count);
    for (const o of v.outputs) {
      const expected = bytesOf(o);
      const prev = o.prev ?? 0;
      const checks = {
        1234: () =>
          sameBytes(p.svb.encode(unsigned, '1234'), expected) &&
          sameBytes(p.svb.decode(expected, v.count, '1234'), unsigned),
        '0124': () =>
          sameBytes(p.svb.encode(unsigned, '0124'), expected) &&
          sameBytes(p.svb.decode(expected, v.count, '0124'), unsigned),
        delta1234: () =>
          sameBytes(p.svb.deltaEncode(unsigned, prev), expected) &&
          sameBytes(p.svb.deltaDecode(expected, v.count, prev), unsigned),
        zigzag_svb1234: () =>
          sameBytes(p.svb.zigzagEncode(signed), expected) && sameBytes(p.svb.zigzagDecode(expected, v.count), signed),
        zigzag_delta_svb1234: () =>
          sameBytes(p.svb.zigzagDeltaEncode(signed, prev), expected) &&
          sameBytes(p.svb.zigzagDeltaDecode(expected, v.count, prev), signed),
      };
      const check = checks[o.variant];
      if (check === undefined) continue; // zigzag_u32 / zigzag_delta_u32: intermediate values, not streams
      streams++;
      if (!check()) fail(`svb ${o.file} (${o.variant}): encode or decode differs from the reference`);
    }
  }
  lines.push(`svb: ${streams} reference streams of ${index.vectors.length} vectors encode and decode byte for byte`);
  if (args['svb-only']) {
    if (failures.length > 0) throw new Error(failures.join('\n'));
    return lines;
  }

  // Tachyon
  const dir = path.join(shared, 'vectors', 'tachyon');
  const work = mkdtempSync(path.join(tmpdir(), 'profpack-vector-smoke-'));
  const tiny = {
    keepDecompressedLimit: 0,
    tuning: { zstdChunk: 64, events: 6, timestamps: 3, nodes: 4096, maxNodes: 64 },
  };
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.bin'))
    .sort();
  let rewritten = 0;
  try {
    for (const file of files) {
      const expected = parseExact(readFileSync(path.join(dir, file.replace(/\.bin$/, '.expected.json')), 'utf8'));
      const check = (how, dump) => {
        const got = {
          accepted: dump.accepted,
          stage: dump.stage,
          error: dump.error?.message ?? null,
          info: dump.info,
          n: dump.samples.length,
          before: dump.samples_before_error,
        };
        const want = {
          accepted: expected.accepted,
          stage: expected.stage,
          error: expected.error?.message ?? null,
          info: expected.info,
          n: expected.samples.length,
          before: expected.samples_before_error,
        };
        if (!same(got, want))
          return fail(
            `${file} (${how}): ${JSON.stringify(got, (_k, x) => (typeof x === 'bigint' ? `${x}` : x)).slice(0, 300)}`,
          );
        const i = expected.samples.findIndex((s, k) => !same(dump.samples[k], s));
        if (i >= 0) fail(`${file} (${how}): sample ${i} differs`);
      };
      const fromPath = dumpProfile(path.join(dir, file));
      check('open(path)', fromPath);
      check('fromBuffer, tiny buffers', dumpProfile(readFileSync(path.join(dir, file)), tiny));
      if (!expected.accepted) continue;
      // Written again from what the reader delivers, then read back.
      const reader = p.ProfileReader.open(path.join(dir, file));
      const info = reader.info;
      const copy = path.join(work, file);
      const writer = new p.ProfileWriter(copy, {
        sampleIntervalUs: info.sampleIntervalUs,
        startTimeUs: info.startTimeUs,
        compression: info.compressionType === 1 ? 'zstd' : 'none',
      });
      const frameInfo = (f) => ({
        filename: f.filename,
        funcname: f.funcname,
        location:
          f.lineno === null
            ? null
            : {
                lineno: f.lineno,
                endLineno: f.endLineno ?? f.lineno,
                colOffset: f.column ?? -1,
                endColOffset: f.endColumn ?? -1,
              },
        opcode: f.opcode ?? undefined,
      });
      reader.replay({
        collect(stackFrames, timestamps) {
          const interpreters = stackFrames.map((i) => ({
            interpreterId: i.interpreterId,
            threads: i.threads.map((t) => ({
              threadId: t.threadId,
              status: t.status,
              frameInfo: t.frameInfo.map(frameInfo),
            })),
          }));
          for (const ts of timestamps) writer.writeSample(interpreters, ts);
        },
      });
      reader.close();
      writer.finalize();
      const back = dumpProfile(copy);
      if (!back.accepted || back.samples.length !== fromPath.samples.length)
        fail(
          `${file}: rewritten, read back ${back.samples.length} samples (${back.error?.message ?? 'accepted'}), wrote ${fromPath.samples.length}`,
        );
      else {
        const i = fromPath.samples.findIndex((s, k) => !same(back.samples[k], s));
        if (i >= 0) fail(`${file}: rewritten, sample ${i} differs`);
        else rewritten++;
      }
    }
    lines.push(
      `tachyon: ${files.length} vectors read from path and buffer as CPython reads them; ${rewritten} accepted ones written again and read back`,
    );
    if (wanted === 'native') lines.push(shrink(p, require, work));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (failures.length > 0) throw new Error(failures.join('\n'));
  return lines;
}

/** A mapped file cut short under a read: the native reader's fault guard answers ERR_TACHYON_FILE_CHANGED. */
function shrink(p, require, work) {
  const { nativeReader } = require(path.join(pkg, 'dist', 'tachyon', 'read', 'native.js'));
  const file = path.join(args['shrink-handshake'] ?? work, 'shrinking.bin');
  const w = new p.ProfileWriter(file, { sampleIntervalUs: 1000, startTimeUs: 1_000_000, compression: 'none' });
  const frames = ['main', 'work', 'step'].map((funcname, lineno) =>
    w.internFrame({ filename: 'app.js', funcname, lineno }),
  );
  for (let i = 0; i < 200_000; i++) w.writeStack(1, 0, 1_000_000 + i * 1000, 0, frames.slice(i % 3));
  w.finalize();
  const size = statSync(file).size;
  const fd = openSync(file, 'r');
  const native = nativeReader();
  const mapped = native.openFile(fd, size, file);
  let how;
  try {
    if (!mapped.mapped) throw new Error('the native reader did not map the file');
    try {
      truncateSync(file, 100);
      how = 'truncated in process';
    } catch (err) {
      if (args['shrink-handshake'] === undefined) throw err;
      // Windows: a mapped file cannot be truncated (ERROR_USER_MAPPED_FILE); the other side does it.
      const handshake = args['shrink-handshake'];
      writeFileSync(path.join(handshake, 'mapped'), '');
      const until = Date.now() + 120_000;
      while (!existsSync(path.join(handshake, 'truncated')) && Date.now() < until)
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      how = `truncation refused in process (${err.code}), truncated by another process`;
    }
    if (statSync(file).size !== 100) throw new Error(`the file was not cut short (${statSync(file).size} bytes)`);
    let code = 'none';
    try {
      native.readRange(mapped, 0, size);
    } catch (err) {
      code = err.code;
    }
    if (code !== 'ERR_TACHYON_FILE_CHANGED') throw new Error(`reading the mapped file past its new end gave ${code}`);
    // The decoder reading mapped bytes in place takes the same guard (as test/tachyon/read/reliability.test.ts).
    const result = new Float64Array(8);
    const decoder = native.createDecoder(
      true,
      0n,
      1,
      size - 64,
      new Uint32Array(5 * 4096),
      new BigUint64Array(4096),
      new Uint32Array(2 * 4096),
      result,
      1 << 20,
    );
    const failure = native.decodeFile(decoder, mapped, 16384, 0, size - 16384, true);
    if (failure?.code !== 'ERR_TACHYON_FILE_CHANGED' || result[2] !== 0)
      throw new Error(`decoding the mapped file past its new end gave ${failure?.code ?? 'no error'}`);
    return `shrink: a mapped file cut short under a read or a decode gives ERR_TACHYON_FILE_CHANGED (${how})`;
  } finally {
    native.closeFile(mapped);
    closeSync(fd);
  }
}

if (args.child) {
  try {
    process.stdout.write(child().join('\n') + '\n');
  } catch (err) {
    process.stdout.write(`FAIL ${err.stack ?? err}\n`);
    process.exitCode = 1;
  }
} else {
  writeFileSync(out, '');
  let ok = true;
  for (const backend of ['native', 'js']) {
    const argv = [fileURLToPath(import.meta.url), '--child', '--package', pkg, '--shared', shared];
    if (args['shrink-handshake'] !== undefined) argv.push('--shrink-handshake', args['shrink-handshake']);
    if (args['svb-only']) argv.push('--svb-only');
    const got = spawnSync(process.execPath, argv, {
      env: { ...process.env, PROFPACK_BACKEND: backend },
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    appendFileSync(out, `== ${backend}\n${got.stdout}${got.stderr}`);
    if (got.status !== 0) ok = false;
  }
  appendFileSync(out, ok ? 'vector-smoke: ok\n' : 'vector-smoke: FAIL (see above)\n');
  process.exitCode = ok ? 0 : 1;
}
