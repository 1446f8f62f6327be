// A large synthetic Tachyon profile for bench/read.mjs: N thread-samples over
// 20 threads with stacks 30-60 frames deep, encoded the way CPython 3.15.2's
// writer encodes (../shared/notes/tachyon-format.md §5: REPEAT when the stack is
// unchanged, buffered per thread and flushed when the thread's stack changes
// or at 16 KiB; else SUFFIX for pure pushes, FULL when less than half is
// shared, POP_PUSH otherwise), uncompressed or as one zstd frame (level 5).
// Self-contained so that it does not depend on the ProfileWriter.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { rng } from '../test/support/rng.mjs';

const zstd = createRequire(import.meta.url)('zstd-napi/binding');

class Out {
  constructor(size = 1 << 20) {
    this.buf = Buffer.allocUnsafe(size);
    this.len = 0;
  }
  ensure(n) {
    if (this.len + n > this.buf.length) {
      const b = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
      this.buf.copy(b, 0, 0, this.len);
      this.buf = b;
    }
  }
  byte(v) {
    this.ensure(1);
    this.buf[this.len++] = v;
  }
  varint(v) {
    this.ensure(10);
    while (v >= 0x80) {
      this.buf[this.len++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.len++] = v;
  }
  bytes(b) {
    this.ensure(b.length);
    b.copy ? b.copy(this.buf, this.len) : this.buf.set(b, this.len);
    this.len += b.length;
  }
  u32(v) {
    this.ensure(4);
    this.buf.writeUInt32LE(v >>> 0, this.len);
    this.len += 4;
  }
  u64(v) {
    this.ensure(8);
    this.buf.writeBigUInt64LE(BigInt(v), this.len);
    this.len += 8;
  }
  result() {
    return this.buf.subarray(0, this.len);
  }
}

const REPEAT_LIMIT = 16 * 1024;

/** Builds the file; returns { bytes, samples }. */
export function synthesize({ samples = 1_000_000, threads = 20, frames = 3000, zstdLevel = 0, seed = 1 } = {}) {
  const r = rng(seed);
  const startTime = 1_700_000_000_000_000;
  const strings = [];
  for (let i = 0; i < 400; i++) strings.push(`/srv/app/module_${i}/component_${i % 37}.py`);
  for (let i = 0; i < 1200; i++) strings.push(`function_${i}_${(i * 7919) % 1000}`);
  const frameTable = [];
  for (let i = 0; i < frames; i++) {
    frameTable.push({
      file: Math.floor(r() * 400),
      func: 400 + Math.floor(r() * 1200),
      line: 1 + Math.floor(r() * 2000),
      col: Math.floor(r() * 60),
      width: Math.floor(r() * 30),
    });
  }
  const state = [];
  for (let t = 0; t < threads; t++) {
    const depth = 30 + Math.floor(r() * 31);
    const stack = [];
    for (let k = 0; k < depth; k++) stack.push(Math.floor(r() * frames));
    state.push({
      id: 0x7f00_0000_0000 + t * 0x1000,
      stack,
      prevStack: [],
      prevTs: startTime,
      ts: startTime,
      repeat: new Out(256),
      repeatCount: 0,
    });
  }
  const region = new Out(64 << 20);
  const prefix = (th) => {
    region.u64(th.id);
    region.u32(0);
  };
  const flushRepeat = (th) => {
    if (th.repeatCount === 0) return;
    prefix(th);
    region.byte(0);
    region.varint(th.repeatCount);
    region.bytes(th.repeat.result());
    th.repeat.len = 0;
    th.repeatCount = 0;
  };
  for (let n = 0; n < samples; n++) {
    const th = state[Math.floor(r() * threads)];
    // Evolve the stack: unchanged, a small pop/push at the top, or a bigger change.
    const x = r();
    const s = th.stack;
    if (x < 0.35) {
      // same stack
    } else if (x < 0.85) {
      const pop = Math.min(s.length - 30, Math.floor(r() * 3));
      s.splice(0, Math.max(0, pop));
      const push = Math.min(60 - s.length, 1 + Math.floor(r() * 3));
      for (let k = 0; k < push; k++) s.unshift(Math.floor(r() * frames));
    } else {
      const pop = Math.min(s.length - 30, 5 + Math.floor(r() * 10));
      s.splice(0, Math.max(0, pop));
      const push = Math.min(60 - s.length, 5 + Math.floor(r() * 10));
      for (let k = 0; k < push; k++) s.unshift(Math.floor(r() * frames));
    }
    th.ts += 900 + Math.floor(r() * 200);
    const status = r() < 0.9 ? 3 : 1;
    const delta = th.ts - th.prevTs;
    th.prevTs = th.ts;
    const prev = th.prevStack;
    const same = prev.length === s.length && prev.every((f, k) => f === s[k]);
    if (same) {
      if (th.repeat.len + 11 > REPEAT_LIMIT) flushRepeat(th);
      th.repeat.varint(delta);
      th.repeat.byte(status);
      th.repeatCount++;
      continue;
    }
    flushRepeat(th);
    let shared = 0;
    while (shared < prev.length && shared < s.length && prev[prev.length - 1 - shared] === s[s.length - 1 - shared])
      shared++;
    const pop = prev.length - shared;
    const push = s.length - shared;
    prefix(th);
    if (shared === 0) {
      region.byte(1);
      region.varint(delta);
      region.byte(status);
      region.varint(s.length);
      for (const f of s) region.varint(f);
    } else if (pop === 0) {
      region.byte(2);
      region.varint(delta);
      region.byte(status);
      region.varint(shared);
      region.varint(push);
      for (let k = 0; k < push; k++) region.varint(s[k]);
    } else if (shared < Math.floor(s.length / 2)) {
      region.byte(1);
      region.varint(delta);
      region.byte(status);
      region.varint(s.length);
      for (const f of s) region.varint(f);
    } else {
      region.byte(3);
      region.varint(delta);
      region.byte(status);
      region.varint(pop);
      region.varint(push);
      for (let k = 0; k < push; k++) region.varint(s[k]);
    }
    th.prevStack = s.slice();
  }
  for (const th of state) flushRepeat(th);
  let sampleRegion = region.result();
  if (zstdLevel > 0) {
    const cctx = new zstd.CCtx();
    cctx.setParameter(zstd.CParameter.compressionLevel, zstdLevel);
    cctx.setParameter(zstd.CParameter.contentSizeFlag, 0);
    const dst = Buffer.allocUnsafe(zstd.compressBound(sampleRegion.length));
    const n = cctx.compress2(dst, sampleRegion);
    sampleRegion = dst.subarray(0, n);
  }
  const tables = new Out(1 << 16);
  const enc = new TextEncoder();
  for (const s of strings) {
    const b = enc.encode(s);
    tables.varint(b.length);
    tables.bytes(b);
  }
  const stringTableOffset = 64 + sampleRegion.length;
  const frameTableOffset = stringTableOffset + tables.len;
  const zz = (v) => (v << 1) ^ (v >> 31);
  for (const f of frameTable) {
    tables.varint(f.file);
    tables.varint(f.func);
    tables.varint(zz(f.line));
    tables.varint(0);
    tables.varint(zz(f.col));
    tables.varint(zz(f.width));
    tables.byte(255);
  }
  const file = new Out(64 + sampleRegion.length + tables.len + 32);
  file.bytes(Buffer.from('HCAT', 'latin1'));
  file.u32(1);
  file.bytes(Buffer.from([3, 15, 2, 0]));
  file.u64(startTime);
  file.u64(1000);
  file.u64(samples);
  file.u32(threads);
  file.u64(stringTableOffset);
  file.u64(frameTableOffset);
  file.u32(zstdLevel > 0 ? 1 : 0);
  file.u32(0);
  file.bytes(sampleRegion);
  file.bytes(tables.result());
  file.u32(strings.length);
  file.u32(frames);
  file.u64(file.len + 8 + 8 + 16);
  file.bytes(Buffer.alloc(16));
  return { bytes: file.result(), samples, regionSize: region.len };
}

export function writeSynthetic(path, options) {
  const { bytes, samples, regionSize } = synthesize(options);
  writeFileSync(path, bytes);
  return { size: bytes.length, samples, regionSize };
}
