/**
 * Where the heap sampler's V8 addon comes from (lib/record/program/heap/probe.ts): a source build, else the npm
 * package's prebuild for this Node major (scripts/prebuild-heap.sh), else the inspector, whose reason names
 * the prebuild that is missing or the file that did not load. Each case is a copy of the package's folders.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../lib/errors';
import { probeHeapSampler } from '../../../../lib/record/program/heap/index';

const sourceBuild = path.join(__dirname, '..', '..', '..', '..', 'build', 'Release', 'profpack_heap.v8heap');
const major = process.versions.node.split('.')[0]!;
const prebuildDir = path.join('prebuilds', `${process.platform}-${process.arch}`);
const prebuild = path.join(prebuildDir, `heap-node${major}.v8heap`);
const missingReason = `no prebuilt heap sampler for Node ${process.versions.node} (no ${prebuild})`;

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

/** A package folder holding only `files` (relative path -> contents, or the file to copy). */
function packageCopy(files: Record<string, Uint8Array | string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'profpack-heap-probe-'));
  roots.push(root);
  for (const [name, contents] of Object.entries(files)) {
    fs.mkdirSync(path.join(root, path.dirname(name)), { recursive: true });
    if (typeof contents === 'string') fs.copyFileSync(contents, path.join(root, name));
    else fs.writeFileSync(path.join(root, name), contents);
  }
  return root;
}

const escaped = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the heap sampler probe and the prebuilds', () => {
  it('names the missing prebuild when neither a source build nor a prebuild for this Node is there', () => {
    // Prebuilds for other Nodes do not count: each major needs its own.
    const root = packageCopy({ [path.join(prebuildDir, 'heap-node999.v8heap')]: new Uint8Array(8) });
    expect(probeHeapSampler({}, root)).toEqual({ kind: 'inspector', reason: missingReason, addon: undefined });
    expect(() => probeHeapSampler({ PROFPACK_HEAP_SAMPLER: 'native' }, root)).toThrow(
      expect.objectContaining({ code: ErrorCode.NATIVE_UNAVAILABLE, message: expect.stringContaining(missingReason) }),
    );
  });

  it('says that the prebuild for this Node exists but did not load when it is not a loadable library', () => {
    const elfHeaderOnly = Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, ...new Array<number>(56).fill(0)]);
    const garbage = fc.oneof(fc.uint8Array({ maxLength: 4096 }), fc.constant(elfHeaderOnly));
    fc.assert(
      fc.property(garbage, (bytes) => {
        const choice = probeHeapSampler({}, packageCopy({ [prebuild]: bytes }));
        expect(choice.kind).toBe('inspector');
        expect(choice.addon).toBeUndefined();
        expect(choice.reason).toMatch(new RegExp(`^the prebuilt ${escaped(prebuild)} exists but did not load: .+`));
      }),
      { numRuns: 12 },
    );
  });

  it('falls back from a source build that does not load to the prebuild, and says why when neither loads', () => {
    const garbage = new TextEncoder().encode('not a shared object');
    const sourceName = path.join('build', 'Release', 'profpack_heap.v8heap');
    const brokenSource = `the source build ${sourceName} exists but did not load: `;
    const neither = probeHeapSampler({}, packageCopy({ [sourceName]: garbage, [prebuild]: garbage })).reason ?? '';
    expect(neither.split('; ')).toEqual([
      expect.stringContaining(brokenSource),
      expect.stringContaining(`the prebuilt ${prebuild} exists but did not load: `),
    ]);
    expect(probeHeapSampler({}, packageCopy({ [sourceName]: garbage })).reason).toMatch(
      new RegExp(`^${escaped(brokenSource)}.+; ${escaped(missingReason)}$`),
    );
    // This checkout's source build, copied as the prebuild for this Node: what an npm install without a compiler
    // loads. Without a source build here (Windows) it is the inspector, for want of a prebuild.
    const copied = packageCopy(fs.existsSync(sourceBuild) ? { [sourceName]: garbage, [prebuild]: sourceBuild } : {});
    const choice = probeHeapSampler({}, copied);
    if (fs.existsSync(sourceBuild)) {
      expect(choice).toMatchObject({ kind: 'native', reason: undefined });
      expect(choice.addon?.nodeMajor).toBe(Number(major));
    } else {
      expect(choice).toEqual({ kind: 'inspector', reason: missingReason, addon: undefined });
    }
  });
});

describe('a forced native sampler that cannot load fails loudly', () => {
  const repoRoot = path.join(__dirname, '..', '..', '..', '..');
  const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
  const forced = (addon: string): NodeJS.ProcessEnv => ({
    ...process.env,
    PROFPACK_HEAP_SAMPLER: 'native',
    PROFPACK_HEAP_ADDON: addon,
  });

  it('PROFPACK_HEAP_ADDON is the one file the probe loads: missing, it is named in the reason', () => {
    const root = packageCopy({});
    const missing = path.join(root, 'elsewhere', 'heap.v8heap');
    const named = `PROFPACK_HEAP_ADDON names ${missing}, which does not exist`;
    expect(probeHeapSampler({ PROFPACK_HEAP_ADDON: missing }, root)).toEqual({
      kind: 'inspector',
      reason: named,
      addon: undefined,
    });
    expect(() => probeHeapSampler({ PROFPACK_HEAP_ADDON: missing, PROFPACK_HEAP_SAMPLER: 'native' }, root)).toThrow(
      expect.objectContaining({ code: ErrorCode.NATIVE_UNAVAILABLE, message: expect.stringContaining(named) }),
    );
    const garbage = path.join(root, 'garbage.v8heap');
    fs.writeFileSync(garbage, 'not a shared object');
    expect(probeHeapSampler({ PROFPACK_HEAP_ADDON: garbage }, root).reason).toMatch(
      new RegExp(`^PROFPACK_HEAP_ADDON ${escaped(garbage)} exists but did not load: .+`),
    );
  });

  it('profpack record --heap: one ERR_NATIVE_UNAVAILABLE line, exit 2, the program never runs, no file', () => {
    const root = packageCopy({});
    const out = path.join(root, 'never.tach');
    const missing = path.join(root, 'missing.v8heap');
    const run = spawnSync(
      process.execPath,
      [cli, 'record', '--heap', '-o', out, '--', process.execPath, '-e', 'console.log("the program ran")'],
      { encoding: 'utf8', env: forced(missing), cwd: root },
    );
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^profpack: ERR_NATIVE_UNAVAILABLE: PROFPACK_HEAP_SAMPLER=native but .*does not exist$/),
    ]);
    expect(run.status).toBe(2);
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it('startRecording({ heap }) throws the ProfpackError', () => {
    const root = packageCopy({});
    const script =
      `const { startRecording } = require(${JSON.stringify(path.join(repoRoot, 'dist', 'index.js'))});` +
      `try { startRecording({ out: ${JSON.stringify(path.join(root, 'r.tach'))}, heap: {} }); console.log('started'); }` +
      ` catch (e) { console.log(e.constructor.name, e.code); }`;
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: forced(path.join(root, 'no')) });
    expect(run.stdout.trim()).toBe(`ProfpackError ${ErrorCode.NATIVE_UNAVAILABLE}`);
    expect(run.status).toBe(0);
  });
});
