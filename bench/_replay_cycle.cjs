// One process of bench/replay-small.mjs: CPU µs (user + system) per ProfileReader.open + replay + close of one file,
// after a warm-up. argv: dist folder, file, backend, 'array' | 'typed', milliseconds of CPU to measure.
'use strict';
const [dist, file, backendName, shape, ms] = process.argv.slice(2);
const { ProfileReader } = require(require('node:path').join(dist, 'index.js'));
const options = shape === 'typed' ? { timestamps: 'typed' } : {};
let seen = 0;
const collector = {
  collect(stackFrames, timestamps) {
    seen += timestamps.length;
  },
};
function cycle() {
  const reader = ProfileReader.open(file, { backend: backendName });
  reader.replay(collector, options);
  reader.close();
}
const warmUntil = Date.now() + 300;
while (Date.now() < warmUntil) cycle();
const start = process.cpuUsage();
let cycles = 0;
let used;
do {
  for (let i = 0; i < 20; i++) cycle();
  cycles += 20;
  const c = process.cpuUsage(start);
  used = c.user + c.system;
} while (used < Number(ms) * 1000);
process.stdout.write(JSON.stringify({ us: used / cycles, samples: seen }));
