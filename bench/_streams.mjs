// The real and synthetic stack streams of ../shared/data/stacks (stackstream/1:
// gzip JSON, stacks as prefix-tree nodes, outermost first), turned into
// Tachyon-shaped samples: frames as (filename, funcname, line, column...),
// stacks innermost first, absolute per-thread timestamps.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const STACKS_DIR = path.resolve(here, '..', '..', 'shared', 'data', 'stacks');
export const REAL_STREAMS = ['py_stdlib', 'node_tsc', 'node_terser', 'perf_gcc', 'node_tsc_1ms', 'node_terser_1ms'];
export const SYNTHETIC_STREAMS = ['synth_deeprec', 'synth_deeprec_capped'];
export const START_TIME_US = 1_000_000;

/** A frame label of the stream, as the profiler that made it would name the frame. */
function parseFrame(kind, label) {
  if (kind === 'py') {
    // file:func:lineno:end_lineno-lineno:col:end_col:opcode (the converter's Tachyon frame)
    const parts = label.split(':');
    const [lineno, endDelta, column, endColumn, opcode] = parts.splice(-5).map(Number);
    const funcname = parts.pop();
    return {
      filename: parts.join(':'),
      funcname,
      lineno,
      endLineno: lineno === -1 ? -1 : lineno + endDelta,
      column,
      endColumn,
      opcode: opcode === 255 ? null : opcode,
    };
  }
  if (kind === 'node') {
    // V8 callFrame: "functionName url:line:column"
    const m = /^(.*) (\S*):(-?\d+):(-?\d+)$/.exec(label);
    if (!m) throw new Error(`unexpected V8 frame label ${label}`);
    return {
      filename: m[2],
      funcname: m[1],
      lineno: Number(m[3]),
      endLineno: -1,
      column: Number(m[4]),
      endColumn: -1,
      opcode: null,
    };
  }
  if (kind === 'perf') {
    // "dso+hexoffset": an unsymbolized native frame, as a profiler without symbols would name it
    const i = label.lastIndexOf('+');
    return {
      filename: label.slice(0, i),
      funcname: `0x${label.slice(i + 1)}`,
      lineno: -1,
      endLineno: -1,
      column: -1,
      endColumn: -1,
      opcode: null,
      address: BigInt(`0x${label.slice(i + 1)}`),
    };
  }
  return { filename: 'synth', funcname: label, lineno: -1, endLineno: -1, column: -1, endColumn: -1, opcode: null };
}

function threadKey(label, index) {
  const m = /^(\d+)(?:\/(\d+))?$/.exec(String(label));
  return m
    ? { threadId: BigInt(m[1]), interpreterId: Number(m[2] ?? 0) }
    : { threadId: BigInt(index + 1), interpreterId: 0 };
}

export function loadStream(name) {
  const doc = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(STACKS_DIR, `${name}.stacks.json.gz`))));
  const kind = name.startsWith('py')
    ? 'py'
    : name.startsWith('node')
      ? 'node'
      : name.startsWith('perf')
        ? 'perf'
        : 'synth';
  const frames = doc.frames.map((l) => parseFrame(kind, l));
  const nodes = doc.nodes;
  // Node stacks, innermost first, each capped at the innermost 256 frames as CPython's writer caps them.
  const memo = new Map();
  const stackOf = (n) => {
    if (n < 0) return [];
    const hit = memo.get(n);
    if (hit) return hit;
    const out = [];
    for (let m = n; m >= 0; m = nodes[m][0]) out.push(nodes[m][1]);
    const capped = out.length > 256 ? out.slice(0, 256) : out;
    memo.set(n, capped);
    return capped;
  };
  const threads = doc.threads.map(threadKey);
  const s = doc.samples;
  const last = new Map();
  const samples = new Array(s.node.length);
  for (let i = 0; i < s.node.length; i++) {
    const t = s.thread[i];
    const time = (last.get(t) ?? START_TIME_US) + s.dt_us[i];
    last.set(t, time);
    samples[i] = {
      thread: t,
      threadId: threads[t].threadId,
      interpreterId: threads[t].interpreterId,
      timestampUs: time,
      dtUs: s.dt_us[i],
      status: s.status[i],
      stack: stackOf(s.node[i]),
    };
  }
  // The sampling interval the stream was recorded at (its median delta, rounded to 100 µs).
  const sorted = s.dt_us.filter((d) => d > 0).sort((a, b) => a - b);
  const intervalUs = Math.max(1, Math.round((sorted[sorted.length >> 1] ?? 1000) / 100) * 100);
  return { name, kind, frames, threads, samples, intervalUs };
}
