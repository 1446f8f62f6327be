// The peer of `npm run bench -- convert`: what a Node user writes in an
// afternoon with pprof-format, straight and unoptimised (about 60 lines).
//   node bench/_pprof_script.mjs cpuprofile-to-pprof IN OUT
//   node bench/_pprof_script.mjs pprof-to-collapsed IN OUT
import fs from 'node:fs';
import zlib from 'node:zlib';
import { Function as PFunction, Line, Location, Profile, Sample, StringTable, ValueType } from 'pprof-format';

const [mode, input, output] = process.argv.slice(2);

if (mode === 'cpuprofile-to-pprof') {
  const cpu = JSON.parse(fs.readFileSync(input, 'utf8'));
  const strings = new StringTable();
  const byId = new Map(cpu.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of cpu.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const functions = [];
  const locations = [];
  const locationOf = new Map();
  const locationFor = (node) => {
    let id = locationOf.get(node.id);
    if (id !== undefined) return id;
    const cf = node.callFrame;
    const fn = new PFunction({
      id: functions.length + 1,
      name: strings.dedup(cf.functionName || '(anonymous)'),
      filename: strings.dedup(cf.url),
    });
    functions.push(fn);
    id = locations.length + 1;
    locations.push(new Location({ id, line: [new Line({ functionId: fn.id, line: cf.lineNumber + 1 })] }));
    locationOf.set(node.id, id);
    return id;
  };
  const samples = new Map();
  for (let i = 0; i < cpu.samples.length; i++) {
    const key = cpu.samples[i];
    const wall = (cpu.timeDeltas[i + 1] ?? 0) * 1000;
    const hit = samples.get(key);
    if (hit) {
      hit.value[0] += 1;
      hit.value[1] += wall;
      continue;
    }
    const stack = [];
    for (let id = key; parent.has(id); id = parent.get(id)) stack.push(locationFor(byId.get(id)));
    samples.set(key, new Sample({ locationId: stack, value: [1, wall] }));
  }
  const profile = new Profile({
    sampleType: [
      new ValueType({ type: strings.dedup('samples'), unit: strings.dedup('count') }),
      new ValueType({ type: strings.dedup('wall'), unit: strings.dedup('nanoseconds') }),
    ],
    sample: [...samples.values()],
    location: locations,
    function: functions,
    stringTable: strings,
  });
  fs.writeFileSync(output, zlib.gzipSync(profile.encode()));
} else if (mode === 'pprof-to-collapsed') {
  const profile = Profile.decode(zlib.gunzipSync(fs.readFileSync(input)));
  const str = (i) => profile.stringTable.strings[Number(i)];
  const fnName = new Map(profile.function.map((f) => [Number(f.id), str(f.name)]));
  const locName = new Map(
    profile.location.map((l) => [
      Number(l.id),
      l.line
        .map((ln) => fnName.get(Number(ln.functionId)))
        .reverse()
        .join(';'),
    ]),
  );
  const counts = new Map();
  for (const s of profile.sample) {
    const key = s.locationId
      .map((id) => locName.get(Number(id)))
      .reverse()
      .join(';');
    counts.set(key, (counts.get(key) ?? 0) + Number(s.value[0]));
  }
  const out = fs.createWriteStream(output);
  for (const [stack, n] of counts) out.write(`${stack} ${n}\n`);
  out.end();
} else {
  throw new Error(`unknown mode ${mode}`);
}
