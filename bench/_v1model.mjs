// A model of CPython 3.15.2's version-1 sample records (notes/tachyon-format.md
// §5: REPEAT / FULL / SUFFIX / POP_PUSH choice, 16 KiB REPEAT runs, per-thread
// deltas), used to size version 1 beside version 2 before ProfileWriter landed
// and kept as a cross-check of its sizes.
const REPEAT_BUFFER = 16 * 1024;

class Out {
  constructor() {
    this.bytes = new Uint8Array(1 << 20);
    this.length = 0;
  }
  reserve(n) {
    if (this.length + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }
  u8(v) {
    this.reserve(1);
    this.bytes[this.length++] = v & 0xff;
  }
  uv(v) {
    this.reserve(10);
    while (v >= 0x80) {
      this.bytes[this.length++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.bytes[this.length++] = v;
  }
  prefix(threadId, interpreterId, kind) {
    this.reserve(13);
    const dv = new DataView(this.bytes.buffer, this.length, 13);
    dv.setBigUint64(0, threadId, true);
    dv.setUint32(8, interpreterId, true);
    dv.setUint8(12, kind);
    this.length += 13;
  }
  view() {
    return this.bytes.subarray(0, this.length);
  }
}

/** Sample region of a version-1 file for samples {threadId, interpreterId, timestampUs, status, stack (frame ids, innermost first)}. */
export function v1SampleRegion(samples, startTimeUs) {
  const out = new Out();
  const threads = new Map();
  const flush = (t) => {
    if (t.repeats.length === 0) return;
    out.prefix(t.threadId, t.interpreterId, 0);
    out.uv(t.repeats.length / 2);
    for (let i = 0; i < t.repeats.length; i += 2) {
      out.uv(t.repeats[i]);
      out.u8(t.repeats[i + 1]);
    }
    t.repeats = [];
    t.used = 0;
  };
  for (const s of samples) {
    const key = `${s.threadId}:${s.interpreterId}`;
    let t = threads.get(key);
    if (!t) threads.set(key, (t = { threadId: s.threadId, interpreterId: s.interpreterId, prev: [], last: startTimeUs, repeats: [], used: 0 }));
    const cur = s.stack;
    const delta = s.timestampUs - t.last;
    t.last = s.timestampUs;
    const prev = t.prev;
    if (cur.length === prev.length && cur.every((f, i) => f === prev[i])) {
      if (t.used + 11 > REPEAT_BUFFER) flush(t);
      t.repeats.push(delta, s.status);
      t.used += (delta < 128 ? 1 : delta < 16384 ? 2 : 3) + 1;
      continue;
    }
    flush(t);
    // Common bottom (outermost) run.
    let shared = 0;
    while (shared < cur.length && shared < prev.length && cur[cur.length - 1 - shared] === prev[prev.length - 1 - shared]) shared++;
    const pop = prev.length - shared;
    const push = cur.length - shared;
    const frames = (n) => {
      for (let i = 0; i < n; i++) out.uv(cur[i]);
    };
    if (shared === 0 || (pop !== 0 && shared < cur.length >> 1)) {
      out.prefix(t.threadId, t.interpreterId, 1);
      out.uv(delta);
      out.u8(s.status);
      out.uv(cur.length);
      frames(cur.length);
    } else if (pop === 0) {
      out.prefix(t.threadId, t.interpreterId, 2);
      out.uv(delta);
      out.u8(s.status);
      out.uv(shared);
      out.uv(push);
      frames(push);
    } else {
      out.prefix(t.threadId, t.interpreterId, 3);
      out.uv(delta);
      out.u8(s.status);
      out.uv(pop);
      out.uv(push);
      frames(push);
    }
    t.prev = cur;
  }
  for (const t of threads.values()) flush(t);
  return out.view();
}
