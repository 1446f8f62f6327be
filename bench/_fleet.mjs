// A generated fleet: FILES Tachyon files of SAMPLES samples each, cut from a
// real stack stream of ../shared/data/stacks (default node_tsc: TypeScript
// compiling rxjs), spread over HOSTS hosts as a rotating agent would leave
// them: DIR/host-H/profile-NNNNN.tach, one file per host per minute, every
// file a different window of the stream (so the fleet's hot functions move
// over the day). Written by the real ProfileWriter (dist).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { ProfileWriter } from '../dist/index.js';
import { modelFrame } from './_peers.mjs';
import { loadStream } from './_streams.mjs';

/** 2025-11-24 00:00 UTC in µs: the generated day. */
export const FLEET_DAY_US = 1_763_942_400_000_000n;

const streams = new Map();

export function generateFleet(
  dir,
  { files = 8, samples = 2000, hosts = 2, stream = 'node_tsc', everyUs = 60_000_000n } = {},
) {
  let s = streams.get(stream);
  if (!s) streams.set(stream, (s = loadStream(stream)));
  const n = s.samples.length;
  const out = [];
  for (let i = 0; i < files; i++) {
    const host = i % hosts;
    const startTimeUs = FLEET_DAY_US + BigInt(Math.floor(i / hosts)) * everyUs;
    const file = path.join(dir, `host-${host}`, `profile-${String(i).padStart(5, '0')}.tach`);
    mkdirSync(path.dirname(file), { recursive: true });
    const w = new ProfileWriter(file, { sampleIntervalUs: BigInt(s.intervalUs), startTimeUs, compression: 'zstd' });
    const ids = new Map();
    const clock = new Map();
    const offset = (i * 104_729) % n;
    for (let k = 0; k < samples; k++) {
      const x = s.samples[(offset + k) % n];
      const t = (clock.get(x.thread) ?? startTimeUs) + BigInt(x.dtUs);
      clock.set(x.thread, t);
      const stack = new Uint32Array(x.stack.length);
      for (let d = 0; d < stack.length; d++) {
        let id = ids.get(x.stack[d]);
        if (id === undefined) ids.set(x.stack[d], (id = w.internFrame(modelFrame(s.kind, s.frames[x.stack[d]]))));
        stack[d] = id;
      }
      w.writeStack(x.threadId, x.interpreterId, t, x.status, stack);
    }
    const last = [...clock.values()].reduce((a, b) => (a > b ? a : b), startTimeUs);
    const durationSec = Number(last - startTimeUs) / 1e6;
    w.setStats(durationSec, durationSec > 0 ? samples / durationSec : 0);
    w.finalize();
    out.push(file);
  }
  return out;
}
