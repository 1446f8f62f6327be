// A small, independent Tachyon encoder for the reader's property tests: it
// writes the records as the format note describes them, with choices CPython's
// writer never makes (random record kinds where several are valid, padded
// non-canonical varints, either byte order, several zstd frames), so the
// reader is checked on everything CPython's reader accepts.
import * as zstd from 'zstd-napi/binding';

export interface TestSample {
  threadId: bigint;
  interpreterId: number;
  timestampUs: bigint;
  status: number;
  /** Frame indices, innermost first. */
  stack: number[];
}

export interface TestFrame {
  filename: number;
  funcname: number;
  lineno: number;
  endLineno: number;
  column: number;
  endColumn: number;
  opcode: number;
}

export interface EncodeOptions {
  littleEndian: boolean;
  compression: number; // 0 raw, 1 zstd, anything else: raw (CPython reads it raw)
  zstdFrames: number; // >= 1
  startTimeUs: bigint;
  intervalUs: bigint;
  strings: string[];
  frames: TestFrame[];
  samples: TestSample[];
  /** Picks among valid encodings and varint paddings; a deterministic stream of numbers in [0, 1). */
  choice: () => number;
  profilingConfig?: number;
  /**
   * Also write SUFFIX records that push nothing and share less than the whole
   * stack: CPython's reader then keeps the top frames, not the bottom ones, so
   * the samples no longer read back as given (for the CPython differential test).
   */
  suffixPopQuirk?: boolean;
  /** Header thread count override (default: the true count). */
  threadCount?: number;
  sampleCount?: bigint;
}

class Bytes {
  private buf = new Uint8Array(256);
  length = 0;
  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.length));
    this.buf = b;
  }
  byte(v: number): void {
    this.ensure(1);
    this.buf[this.length++] = v & 0xff;
  }
  bytes(v: Uint8Array): void {
    this.ensure(v.length);
    this.buf.set(v, this.length);
    this.length += v.length;
  }
  /** LEB128, optionally padded with redundant continuation groups (CPython accepts up to 10 bytes). */
  varint(value: bigint, pad = 0): void {
    const groups: number[] = [];
    let v = value;
    do {
      groups.push(Number(v & 0x7fn));
      v >>= 7n;
    } while (v > 0n);
    while (pad-- > 0 && groups.length < 10) groups.push(0);
    groups.forEach((g, i) => this.byte(i < groups.length - 1 ? g | 0x80 : g));
  }
  fixed(value: bigint, size: number, littleEndian: boolean): void {
    for (let i = 0; i < size; i++) {
      const shift = BigInt(8 * (littleEndian ? i : size - 1 - i));
      this.byte(Number((value >> shift) & 0xffn));
    }
  }
  result(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

const U64 = (1n << 64n) - 1n;

/** Encodes samples in the given order (no deferred REPEATs, so file order = input order). */
export function encodeProfile(o: EncodeOptions): Uint8Array {
  const region = new Bytes();
  const pad = (): number => (o.choice() < 0.2 ? Math.floor(o.choice() * 3) : 0);
  const uv = (b: Bytes, v: number | bigint): void => b.varint(BigInt(v), pad());
  const threads = new Map<string, { prevTs: bigint; stack: number[] }>();
  let i = 0;
  const samples = o.samples;
  while (i < samples.length) {
    const s = samples[i]!;
    const key = `${s.threadId}/${s.interpreterId}`;
    let th = threads.get(key);
    if (!th) {
      th = { prevTs: o.startTimeUs, stack: [] };
      threads.set(key, th);
    }
    region.fixed(s.threadId, 8, o.littleEndian);
    region.fixed(BigInt(s.interpreterId), 4, o.littleEndian);
    const prev = th.stack;
    const cur = s.stack;
    const same = prev.length === cur.length && prev.every((f, k) => f === cur[k]);
    if (same && o.choice() < 0.8) {
      // A REPEAT run: this sample and the following ones of the same thread and stack.
      let n = 1;
      while (
        i + n < samples.length &&
        samples[i + n]!.threadId === s.threadId &&
        samples[i + n]!.interpreterId === s.interpreterId &&
        samples[i + n]!.stack.length === cur.length &&
        samples[i + n]!.stack.every((f, k) => f === cur[k]) &&
        o.choice() < 0.9
      ) {
        n++;
      }
      region.byte(0);
      uv(region, n);
      for (let k = 0; k < n; k++) {
        const t = samples[i + k]!;
        uv(region, (t.timestampUs - th.prevTs) & U64);
        th.prevTs = t.timestampUs;
        region.byte(t.status);
      }
      i += n;
      continue;
    }
    // Common bottom run.
    let shared = 0;
    while (
      shared < prev.length &&
      shared < cur.length &&
      prev[prev.length - 1 - shared] === cur[cur.length - 1 - shared]
    )
      shared++;
    let kind = 1 + Math.floor(o.choice() * 3);
    // SUFFIX and POP_PUSH may keep any bottom run up to the common one.
    const keep = Math.floor(o.choice() * (shared + 1));
    if (kind === 2 && keep === cur.length && keep < prev.length && !o.suffixPopQuirk) kind = 3;
    region.byte(kind);
    uv(region, (s.timestampUs - th.prevTs) & U64);
    th.prevTs = s.timestampUs;
    region.byte(s.status);
    if (kind === 1) {
      uv(region, cur.length);
      for (const f of cur) uv(region, f);
    } else if (kind === 2) {
      uv(region, keep);
      uv(region, cur.length - keep);
      for (const f of cur.slice(0, cur.length - keep)) uv(region, f);
    } else {
      // Popping more than the stack holds is clamped by CPython's reader.
      const extra = keep === 0 ? Math.floor(o.choice() * 3) : 0;
      uv(region, prev.length - keep + extra);
      uv(region, cur.length - keep);
      for (const f of cur.slice(0, cur.length - keep)) uv(region, f);
    }
    th.stack = cur;
    i++;
  }
  let sampleRegion = region.result();
  if (o.compression === 1) {
    const parts: Uint8Array[] = [];
    const frames = Math.max(1, o.zstdFrames);
    const step = Math.ceil(sampleRegion.length / frames) || 1;
    const cctx = new zstd.CCtx();
    for (let at = 0, k = 0; k < frames; k++, at += step) {
      const piece = sampleRegion.subarray(Math.min(at, sampleRegion.length), Math.min(at + step, sampleRegion.length));
      cctx.setParameter(zstd.CParameter.checksumFlag, k % 2);
      const dst = new Uint8Array(zstd.compressBound(piece.length));
      const n = cctx.compress2(dst, piece);
      parts.push(dst.subarray(0, n));
    }
    const b = new Bytes();
    parts.forEach((p) => b.bytes(p));
    sampleRegion = b.result();
  }
  const strTable = new Bytes();
  const utf8 = new TextEncoder();
  for (const s of o.strings) {
    const e = utf8.encode(s);
    strTable.varint(BigInt(e.length), pad());
    strTable.bytes(e);
  }
  const zz = (v: number): bigint => BigInt(((v << 1) ^ (v >> 31)) >>> 0);
  const frameTable = new Bytes();
  for (const f of o.frames) {
    frameTable.varint(BigInt(f.filename), pad());
    frameTable.varint(BigInt(f.funcname), pad());
    frameTable.varint(zz(f.lineno), pad());
    frameTable.varint(zz(f.lineno === -1 || f.endLineno === -1 ? 0 : (f.endLineno - f.lineno) | 0), pad());
    frameTable.varint(zz(f.column), pad());
    frameTable.varint(zz(f.column === -1 || f.endColumn === -1 ? 0 : (f.endColumn - f.column) | 0), pad());
    frameTable.byte(f.opcode);
  }
  const le = o.littleEndian;
  const stringTableOffset = 64 + sampleRegion.length;
  const frameTableOffset = stringTableOffset + strTable.length;
  const fileSize = frameTableOffset + frameTable.length + 32;
  const out = new Bytes();
  out.fixed(0x54414348n, 4, le);
  out.fixed(1n, 4, le);
  [3, 15, 2, 0].forEach((b) => out.byte(b));
  out.fixed(o.startTimeUs, 8, le);
  out.fixed(o.intervalUs, 8, le);
  out.fixed(o.sampleCount ?? BigInt(o.samples.length), 8, le);
  out.fixed(BigInt(o.threadCount ?? threads.size), 4, le);
  out.fixed(BigInt(stringTableOffset), 8, le);
  out.fixed(BigInt(frameTableOffset), 8, le);
  out.fixed(BigInt(o.compression), 4, le);
  out.fixed(BigInt(o.profilingConfig ?? 0), 4, le);
  out.bytes(sampleRegion);
  out.bytes(strTable.result());
  out.bytes(frameTable.result());
  out.fixed(BigInt(o.strings.length), 4, le);
  out.fixed(BigInt(o.frames.length), 4, le);
  out.fixed(BigInt(fileSize), 8, le);
  out.bytes(new Uint8Array(16));
  return out.result();
}
