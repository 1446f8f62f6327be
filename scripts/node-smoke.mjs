// One round of the shipped library on the Node running it, on both backends:
// load, read a shared zstd vector, write and read back (zstd), convert and
// record through the CLI. CI runs it on the Node versions that do not run the
// whole suite (.ci/run). Needs dist/ (npm run compile) and ../shared.
//   node scripts/node-smoke.mjs        (prints one line per backend)
// --package DIR runs an installed package instead of this checkout, --shared
// DIR names the shared folder, --out FILE writes the lines there rather than
// to stdout (under Wine a Windows process cannot write to a host pipe).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const option = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const self = fileURLToPath(import.meta.url);
const root = path.resolve(option('package') ?? path.join(path.dirname(self), '..'));
const shared = path.resolve(option('shared') ?? path.join(root, '..', 'shared'));
const cli = path.join(root, 'dist', 'cli', 'main.js');

function run(args, env) {
  const got = spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8' });
  if (got.status !== 0) throw new Error(`${args.join(' ')} exited ${got.status}: ${got.stderr}`);
  return got.stdout;
}

if (process.argv.includes('--child')) {
  const require = createRequire(import.meta.url);
  const p = require(path.join(root, 'dist', 'index.js'));
  const work = mkdtempSync(path.join(tmpdir(), 'profpack-smoke-'));
  try {
    const read = p.ProfileReader.open(path.join(shared, 'vectors', 'tachyon', 's20_random_mix_zstd.bin'));
    let n = 0;
    for (const _ of read.samples()) n++;
    if (n !== Number(read.info.sampleCount)) throw new Error(`read ${n} samples, header says ${read.info.sampleCount}`);
    read.close();
    const file = path.join(work, 'w.tach');
    const w = new p.ProfileWriter(file, { sampleIntervalUs: 1000 });
    for (let i = 0; i < 200; i++)
      w.writeStack(1, 0, i * 1000, 0, [w.internFrame({ filename: 'smoke.js', funcname: `f${i % 7}`, lineno: i })]);
    w.finalize();
    const back = p.ProfileReader.open(file);
    if (Number(back.info.sampleCount) !== 200 || back.info.compressionType !== 1)
      throw new Error(`wrote 200 zstd samples, read ${JSON.stringify(back.info)}`);
    back.close(); // Windows deletes no file that a view still maps
    const env = process.env;
    run(
      [
        cli,
        'convert',
        path.join(shared, 'data', 'outside', 'node-cpu-prof.heavy.cpuprofile'),
        '-o',
        path.join(work, 'c.tach'),
      ],
      env,
    );
    run([cli, 'convert', path.join(work, 'c.tach'), '-o', path.join(work, 'c.collapsed')], env);
    if (readFileSync(path.join(work, 'c.collapsed'), 'utf8').trim().split('\n').length < 2)
      throw new Error('convert produced no stacks');
    const spin =
      'function smokeSpin() { const e = Date.now() + 300; let x = 0; while (Date.now() < e) x += Math.sqrt(x + 1); return x; } smokeSpin();';
    run(
      [cli, 'record', '--harvest-ms', '100', '--out', path.join(work, 'r.tach'), '--', process.execPath, '-e', spin],
      env,
    );
    if (!run([cli, 'top', path.join(work, 'r.tach'), '-n', '5'], env).includes('smokeSpin'))
      throw new Error('the recording lacks smokeSpin');
    console.log(
      `node-smoke: Node ${process.version} ${process.arch} ${p.backend.name} (simd ${p.backend.features.simd ?? 'none'}): read ${n}, wrote and read 200 (zstd), converted, recorded`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
} else {
  let lines = '';
  for (const backend of ['native', 'js']) {
    lines += run([self, '--child', '--package', root, '--shared', shared], {
      ...process.env,
      PROFPACK_BACKEND: backend,
    });
  }
  if (option('out') !== undefined) writeFileSync(option('out'), lines);
  else process.stdout.write(lines);
}
