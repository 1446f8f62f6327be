// test tier: slow (programs compiled by tsc and recorded, ~22 s)
/**
 * Source maps: a TypeScript program compiled by tsc (adjacent .map, or
 * inline) reads as src/app.ts at the hot loop's source line, both when
 * `profpack record` maps at record time and with `--source-maps DIR` on
 * top, convert and flame for a file recorded without.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFrame } from '../../lib/profile/index';
import { SourceMapper } from '../../lib/sourcemap/index';
import { isProfpackError } from '../../lib/errors';
import { repoRoot } from '../support/environment';

const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const dir = fs.mkdtempSync(path.join(tmpdir(), 'profpack-sourcemap-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Types and blank lines the JavaScript does not have: the source's lines differ from the script's. */
const APP_TS = [
  'interface Options {',
  '  ms: number;',
  '  label: string;',
  '}',
  'type Unused = { a: number };',
  'export function hotLoop(options: Options): number {',
  '  const end: number = Date.now() + options.ms;',
  '  let x: number = 0;',
  '  while (Date.now() < end) {',
  '    for (let i = 0; i < 2000; i++) x += Math.sqrt(x + i);', // line 10: the hot line
  '  }',
  '  return x;',
  '}',
  "hotLoop({ ms: 300, label: 'hot' });",
  '',
].join('\n');
const HOT_LINE = 10;

function project(name: string, mapFlag: '--sourceMap' | '--inlineSourceMap'): string {
  const root = path.join(dir, name);
  fs.mkdirSync(path.join(root, 'src'), { recursive: true });
  fs.writeFileSync(path.join(root, 'src', 'app.ts'), APP_TS);
  execFileSync(process.execPath, [
    tsc,
    mapFlag,
    '--outDir',
    path.join(root, 'dist'),
    '--module',
    'commonjs',
    '--target',
    'es2020',
    path.join(root, 'src', 'app.ts'),
  ]);
  return root;
}

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Row {
  funcname: string;
  filename: string;
  lineno: number;
  self: number;
}

/** hotLoop's rows of `top --by line`, by line. */
function hotLines(...args: string[]): { rows: Row[]; byLine: Map<number, number> } {
  const r = run('top', ...args, '--by', 'line', '--json', '-n', '0');
  expect(r.status, r.stderr).toBe(0);
  const rows = (JSON.parse(r.stdout) as { rows: Row[] }).rows.filter((x) => x.funcname === 'hotLoop');
  return { rows, byLine: new Map(rows.map((x) => [x.lineno, x.self])) };
}

function expectHotAtSource(rows: Row[], byLine: Map<number, number>, root: string): void {
  expect(rows.length).toBeGreaterThan(0);
  // One spelling per script (docs/formats.md): a path, whatever V8 or the map said.
  for (const r of rows) expect(r.filename).toBe(path.join(root, 'src', 'app.ts'));
  const self = rows.reduce((s, r) => s + r.self, 0);
  expect(byLine.get(HOT_LINE) ?? 0).toBeGreaterThan(self / 2);
}

let adjacent = '';
let inline = '';
beforeAll(() => {
  adjacent = project('adjacent', '--sourceMap');
  inline = project('inline', '--inlineSourceMap');
  expect(fs.existsSync(path.join(adjacent, 'dist', 'app.js.map'))).toBe(true);
  expect(fs.readFileSync(path.join(inline, 'dist', 'app.js'), 'utf8')).toMatch(
    /sourceMappingURL=data:application\/json;base64,/,
  );
});

describe('source maps at record time (the default)', () => {
  for (const which of ['adjacent', 'inline'] as const) {
    it(`a ${which} map: top --by line names src/app.ts at the hot loop's source line`, () => {
      const root = which === 'adjacent' ? adjacent : inline;
      const out = path.join(dir, `${which}.tach`);
      const rec = run('record', '-o', out, '--', process.execPath, path.join(root, 'dist', 'app.js'));
      expect(rec.status, rec.stderr).toBe(0);
      const { rows, byLine } = hotLines(out);
      expectHotAtSource(rows, byLine, root);
      expect(run('info', out).stdout).toMatch(/^source maps: +frames read at their source while recording$/m);
    });
  }
});

describe('--source-maps DIR for a file recorded without', () => {
  let raw = '';
  beforeAll(() => {
    raw = path.join(dir, 'raw.tach');
    const rec = run(
      'record',
      '--no-source-maps',
      '-o',
      raw,
      '--',
      process.execPath,
      path.join(adjacent, 'dist', 'app.js'),
    );
    expect(rec.status, rec.stderr).toBe(0);
  });

  it('--no-source-maps records the script as it ran', () => {
    const { rows } = hotLines(raw);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.filename).toBe(path.join(adjacent, 'dist', 'app.js'));
    // The file says so: the recorded process sent its note, the writer that maps frames says whether it did.
    expect(run('info', raw).stdout).toMatch(/^source maps: +off while recording \(--no-source-maps\)$/m);
  });

  it('top, convert and flame read it at the source', () => {
    const { rows, byLine } = hotLines(raw, '--source-maps', adjacent);
    expectHotAtSource(rows, byLine, adjacent);
    const cpuprofile = path.join(dir, 'mapped.cpuprofile');
    expect(run('convert', raw, '-o', cpuprofile, '-q', '--source-maps', adjacent).status).toBe(0);
    const urls = new Set(
      (
        JSON.parse(fs.readFileSync(cpuprofile, 'utf8')) as {
          nodes: { callFrame: { functionName: string; url: string } }[];
        }
      ).nodes
        .filter((n) => n.callFrame.functionName === 'hotLoop')
        .map((n) => n.callFrame.url),
    );
    expect([...urls]).toEqual([path.join(adjacent, 'src', 'app.ts')]);
    const page = path.join(dir, 'mapped.html');
    expect(run('flame', raw, '-o', page, '--source-maps', adjacent).status).toBe(0);
    const html = fs.readFileSync(page, 'utf8');
    const data = JSON.parse(/<script id="profpack-data" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!) as {
      funcs: { name: string; file: string }[];
    };
    // hotLoop at its source; the script's top level (line 1, which tsc's map leaves unmapped) stays as it ran.
    expect(new Set(data.funcs.filter((f) => f.name === 'hotLoop').map((f) => f.file))).toEqual(
      new Set([path.join(adjacent, 'src', 'app.ts')]),
    );
  });

  it('finds the scripts under DIR when the recorded paths are from elsewhere (another machine, a moved checkout)', () => {
    const moved = path.join(dir, 'elsewhere');
    fs.cpSync(adjacent, path.join(moved, 'adjacent'), { recursive: true });
    const { rows, byLine } = hotLines(raw, '--source-maps', moved);
    // The recorded script exists here too; DIR is searched first.
    expectHotAtSource(rows, byLine, path.join(moved, 'adjacent'));
  });
});

describe('SourceMapper on bad input', () => {
  it('a DIR that is not a directory is ERR_INVALID_ARGUMENT, from the library and the CLI', () => {
    let err: unknown;
    try {
      new SourceMapper(path.join(dir, 'missing'));
    } catch (e) {
      err = e;
    }
    expect(isProfpackError(err) && err.code).toBe('ERR_INVALID_ARGUMENT');
    const r = run('top', path.join(dir, 'adjacent.tach'), '--source-maps', path.join(dir, 'missing'));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^profpack: ERR_INVALID_ARGUMENT: --source-maps: .*missing is not a directory\n$/);
  });

  it('a map that is not JSON leaves frames as they are and says so once', () => {
    const root = path.join(dir, 'broken');
    fs.mkdirSync(root, { recursive: true });
    const script = path.join(root, 'app.js');
    fs.writeFileSync(script, 'function f() {}\n//# sourceMappingURL=app.js.map\n');
    fs.writeFileSync(`${script}.map`, '{ not json');
    const mapper = new SourceMapper();
    const frame = makeFrame('f', pathToFileURL(script).href, 1, 1);
    expect(mapper.mapFrame(frame)).toBe(frame);
    expect(mapper.mapFrame(frame)).toBe(frame);
    expect(mapper.warnings).toHaveLength(1);
    expect(mapper.warnings[0]).toContain('app.js.map');
    // Frames with nothing to map: no line, not a file, a script without a map.
    for (const f of [
      makeFrame('(idle)', ''),
      makeFrame('g', 'node:internal/x', 3, 1),
      makeFrame('h', pathToFileURL(path.join(adjacent, 'src', 'app.ts')).href, 2, 1),
    ])
      expect(mapper.mapFrame(f)).toBe(f);
  });
});
