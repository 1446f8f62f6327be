/**
 * The preload loads no writer code: a program `profpack record` runs loads the agent (sampler, encoder, pipe), and
 * none of the code that writes the file (lib/record/writer, lib/tachyon's writer, the source-map reader): that
 * runs in `profpack record` itself, or in a child's writer process. Runs the compiled CLI (dist/, `npm run compile`).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeHeapSampler } from '../../../lib/record/program/heap/index';
import { SLOWDOWN, repoRoot } from '../../support/environment';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const dist = path.join(repoRoot, 'dist');
const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-preload-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A program's own list of the dist/ modules it has loaded, printed as JSON once its harvests have run. */
const LIST_MODULES = `
const dist = ${JSON.stringify(dist + path.sep)};
const loaded = () => Object.keys(require.cache).filter((f) => f.startsWith(dist)).map((f) => f.slice(dist.length));
`;

/** What only CPU sampling runs: V8's CPU sampler, the harvests' encoding and the writer's ingester of them. */
const CPU_ONLY = ['record/program/cpu-sampler.js', 'record/wire/cpu.js', 'record/writer/cpu-ingest.js'];

/** dist-relative module paths with '/' (the lists above and below are written so). */
const posixPaths = (files: string[]) => files.map((f) => f.split(path.sep).join('/'));

const WRITER_CODE = [/^record\/writer\//, /^record\/recording\//, /^tachyon\//, /^sourcemap\//, /^formats\//];

describe('the recording preload', () => {
  it('loads the agent and none of the writer, in the program and in a Node child it starts', () => {
    const out = path.join(dir, 'app.tach');
    const app = path.join(dir, 'app.js');
    fs.writeFileSync(
      app,
      `${LIST_MODULES}
const { execFileSync } = require('node:child_process');
setTimeout(() => {
  // A Node child: recorded into its own file, through a writer process its preload spawns.
  const child = execFileSync(process.execPath, ['-e', ${JSON.stringify(
    `${LIST_MODULES}setTimeout(() => console.log(JSON.stringify(loaded())), 100);`,
  )}], { encoding: 'utf8' });
  require('node:fs').writeFileSync(${JSON.stringify(path.join(dir, 'loaded.json'))}, JSON.stringify({ root: loaded(), child: JSON.parse(child) }));
}, 100);
`,
    );
    const run = spawnSync(
      process.execPath,
      [cli, 'record', '--harvest-ms', '20', '-o', out, '--', process.execPath, app],
      {
        encoding: 'utf8',
        timeout: 120_000 * SLOWDOWN,
      },
    );
    expect(run.status, run.stderr).toBe(0);
    const { root, child } = JSON.parse(fs.readFileSync(path.join(dir, 'loaded.json'), 'utf8')) as Record<
      'root' | 'child',
      string[]
    >;
    for (const loaded of [root, child]) {
      expect(loaded).toEqual(
        expect.arrayContaining(['record/launch/preload.js', 'record/program/agent.js', 'record/wire/cpu.js']),
      );
      expect(posixPaths(loaded).filter((f) => WRITER_CODE.some((writer) => writer.test(f)))).toEqual([]);
    }
    // The pipe went to profpack record, the child's to its own writer process: both wrote their files.
    expect(run.stderr).toMatch(/wrote .*app\.tach/);
    expect(fs.readdirSync(dir).filter((f) => /^app\.\d+\.tach$/.test(f))).toHaveLength(1);
  });

  it('in a heap-only recording loads no CPU code, nor node:inspector (API sampler) nor node:child_process', () => {
    const out = path.join(dir, 'heap.tach');
    const app = path.join(dir, 'heap-app.js');
    // process.moduleLoadList names the builtins loaded so far ("NativeModule child_process").
    fs.writeFileSync(
      app,
      `${LIST_MODULES}
const kept = [];
const timer = setInterval(() => kept.push(new Array(1000).fill(kept.length)), 5);
setTimeout(() => {
  clearInterval(timer);
  const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule '));
  require('node:fs').writeFileSync(${JSON.stringify(path.join(dir, 'heap-loaded.json'))},
    JSON.stringify({ dist: loaded(), builtins }));
}, 300);
`,
    );
    const run = spawnSync(
      process.execPath,
      [cli, 'record', '--heap', '--no-cpu', '--harvest-ms', '50', '-o', out, '--', process.execPath, app],
      { encoding: 'utf8', timeout: 120_000 * SLOWDOWN },
    );
    expect(run.status, run.stderr).toBe(0);
    const { dist: loaded, builtins } = JSON.parse(fs.readFileSync(path.join(dir, 'heap-loaded.json'), 'utf8')) as {
      dist: string[];
      builtins: string[];
    };
    const posix = posixPaths(loaded);
    expect(posix).toEqual(expect.arrayContaining(['record/launch/preload.js', 'record/program/heap-recorder.js']));
    expect(posix.filter((f) => CPU_ONLY.includes(f))).toEqual([]);
    expect(builtins).toEqual(expect.arrayContaining(['NativeModule fs']));
    expect(builtins.filter((m) => m === 'NativeModule child_process')).toEqual([]);
    // The inspector is the heap sampler's JS twin (PROFPACK_BACKEND=js, or no addon for this Node): loaded only then.
    const inspector = builtins.includes('NativeModule inspector');
    expect(inspector).toBe(probeHeapSampler().kind === 'inspector');
    expect(run.stderr).toMatch(/wrote .*heap\.tach/);
  });

  it('in record --heap --no-cpu --inline in process loads no CPU code and no listener for a summary line', () => {
    const out = path.join(dir, 'inline.tach');
    const app = path.join(dir, 'inline-app.js');
    fs.writeFileSync(
      app,
      `${LIST_MODULES}
require('node:fs').writeFileSync(${JSON.stringify(path.join(dir, 'inline-loaded.json'))}, JSON.stringify(loaded()));
`,
    );
    const run = spawnSync(
      process.execPath,
      [cli, 'record', '--heap', '--no-cpu', '--inline', '-o', out, '--', process.execPath, app],
      { encoding: 'utf8', timeout: 120_000 * SLOWDOWN },
    );
    expect(run.status, run.stderr).toBe(0);
    // The program ran in record's own process (a spawned --inline target says why it was not), its file written there.
    expect(run.stderr).not.toMatch(/a Node process of its own/);
    const posix = posixPaths(JSON.parse(fs.readFileSync(path.join(dir, 'inline-loaded.json'), 'utf8')) as string[]);
    expect(posix).toEqual(
      expect.arrayContaining([
        'record/launch/in-process.js',
        'record/program/heap-recorder.js',
        'record/writer/tachyon-sink.js',
      ]),
    );
    expect(posix.filter((f) => [...CPU_ONLY, 'record/launch/inline.js'].includes(f))).toEqual([]);
    expect(run.stderr).toMatch(/wrote .*inline\.tach/);
  });
});
