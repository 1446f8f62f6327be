// Speed and peak memory of the pprof adapter (lib/formats) against the old lib/convert path on one file,
// one mode per process (run under /usr/bin/time -f '%M KB' for peak RSS); CPU time is what it reports.
//   node bench/pprof-adapter.cjs new-read|new-convert|new-aggregate|old-read|old-convert|builder-write FILE
// FILE: bench/fixtures/streams-1m.mjs's streams-1m.pb.gz. Needs npm run compile.
const fs = require('fs');
const [mode, file] = process.argv.slice(2);
const t0 = process.cpuUsage();
let out = 0; let records = 0; let total = 0;
const sink = { path: '', write: (c) => { out += c.length; } };
if (mode.startsWith('new')) {
  const { readPprof, writePprof } = require('../dist/formats/pprof.js');
  const src = readPprof(fs.readFileSync(file));
  if (mode === 'new-read') { for (const b of src.batches()) { records += b.length; for (let i = 0; i < b.length; i++) total += b.values[1][i]; } }
  else writePprof(src, sink, { aggregate: mode === 'new-aggregate' });
} else if (mode.startsWith('old')) {
  const { fromPprof } = require('../dist/convert/pprof-read.js');
  const { toPprof } = require('../dist/convert/pprof.js');
  const src = fromPprof(fs.readFileSync(file));
  if (mode === 'old-read') { for (const s of src.samples()) records++; }
  else out = toPprof(src, { aggregate: mode === 'old-aggregate' }).length;
} else if (mode === 'builder-write') {
  const { ProfileBuilder, makeFrame } = require('../dist/profile/index.js');
  const { writePprof } = require('../dist/formats/pprof.js');
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'wall', unit: 'nanoseconds' }], defaultSampleType: 1, startTimeUs: 1_795_392_000_000_000n, sampleIntervalUs: 1000n });
  const frames = Array.from({ length: 2000 }, (_, i) => b.internFrame(makeFrame('fn' + i, 'file' + (i % 50) + '.js', i)));
  const threads = [b.internThread(1n, 0, 'main'), b.internThread(2n, 0, 'worker')];
  let seed = 1; const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const stacks = Array.from({ length: 20000 }, () => { const d = 5 + Math.floor(rnd() * 30); const f = []; for (let k = 0; k < d; k++) f.push(frames[Math.floor(rnd() * frames.length)]); return b.stacks.intern(f); });
  for (let i = 0; i < 1_000_000; i++) b.add(stacks[Math.floor(rnd() * stacks.length)], threads[i & 1], 1_795_392_000_000_000 + i * 1000, 0, [1, 1000 + (i % 997) + 0.25]);
  const t1 = process.cpuUsage();
  writePprof(b, sink, {});
  const u = process.cpuUsage(t1);
  console.log(`write-only cpu ${((u.user + u.system) / 1e6).toFixed(2)} s`);
}
const u = process.cpuUsage(t0);
console.log(`${mode} cpu ${((u.user + u.system) / 1e6).toFixed(2)} s records ${records} total ${total} out ${out} rss-now ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB`);
