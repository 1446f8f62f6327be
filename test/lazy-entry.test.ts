/**
 * `require('profpack')` loads only what the first call needs (issue 18, cold
 * start): the built entry defers every module but errors and backend until
 * one of its exports is read, and then gives the module's own objects; the
 * Tachyon entry defers its read and write wings the same way.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend } from '../lib/backend';
import { repoRoot, sharedPath } from './support/environment';

const script = `
  const before = new Set(Object.keys(require.cache));
  const p = require('profpack');
  const loaded = () => Object.keys(require.cache).filter((f) => !before.has(f) && f.includes('/dist/')).map((f) => f.slice(f.indexOf('/dist/') + 6));
  const atRequire = loaded();
  const reader = p.ProfileReader;
  const afterReader = loaded();
  const names = Object.keys(p);
  const missing = names.filter((n) => p[n] === undefined);
  const stable = p.varint === p.varint && p.svb === p.svb && p.v2 === p.v2;
  const same = p.ProfileReader === reader && typeof p.convert === 'function' && p.svb.decode(p.svb.encode(Uint32Array.of(7, 70000)), 2).join() === '7,70000';
  console.log(JSON.stringify({ atRequire, afterReader, names: names.length, missing, stable, same }));
`;

describe('lazy package entry', () => {
  it('require loads errors and backend only; each export loads its module on first read', () => {
    const r = spawnSync(process.execPath, ['-e', script], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env } });
    expect(r.stderr).not.toMatch(/Error/);
    const out = JSON.parse(r.stdout.trim());
    expect(out.atRequire.sort()).toEqual(['backend.js', 'errors.js', 'index.js']);
    expect(out.afterReader.length).toBeGreaterThan(3);
    expect(out.afterReader.some((f: string) => f.startsWith('convert/') || f.startsWith('record/'))).toBe(false);
    // lib/tachyon/index.ts defers its wings too: the reader comes without the writer, version 2's file API, downgrade and recover.
    expect(
      out.afterReader.filter(
        (f: string) =>
          f.startsWith('tachyon/write/') ||
          ['tachyon/downgrade.js', 'tachyon/recover/index.js', 'tachyon/v2-api.js'].includes(f),
      ),
    ).toEqual([]);
    expect(out.names).toBeGreaterThan(30);
    expect(out.missing).toEqual([]);
    expect(out.stable).toBe(true);
    expect(out.same).toBe(true);
  });

  it('ES modules importing the CommonJS build still see every named export', () => {
    const code = `const m = await import(${JSON.stringify(repoRoot + '/dist/index.js')}); const c = (await import('node:module')).createRequire(import.meta.url)(${JSON.stringify(repoRoot + '/dist/index.js')});
      console.log(JSON.stringify({ missing: Object.keys(c).filter((k) => m[k] !== c[k]), reader: typeof m.ProfileReader }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
      cwd: repoRoot,
      encoding: 'utf8',
      env: { ...process.env },
    });
    expect(r.stderr).not.toMatch(/Error/);
    const out = JSON.parse(r.stdout.trim());
    expect(out).toEqual({ missing: [], reader: 'function' });
  });

  it('the built CLI loads only the command its command line names; help still lists every command', () => {
    const listing = `process.on('exit', () => require('fs').writeSync(2, '\\nLOADED ' + JSON.stringify(Object.keys(require.cache).filter((f) => f.includes('/dist/')).map((f) => f.slice(f.indexOf('/dist/') + 6)))));`;
    const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
    const preload = path.join(mkdtempSync(path.join(tmpdir(), 'profpack-lazy-cli-')), 'listing.cjs');
    writeFileSync(preload, listing);
    const run = (...args: string[]) => {
      const r = spawnSync(process.execPath, ['-r', preload, cli, ...args], { cwd: repoRoot, encoding: 'utf8' });
      return { ...r, loaded: JSON.parse(/LOADED (.*)$/.exec(r.stderr)![1]!) as string[] };
    };
    const info = run('info', sharedPath('vectors', 'tachyon', 's01_single_thread_none.bin'));
    expect(info.status).toBe(0);
    expect(info.stdout).toMatch(/samples/);
    expect(info.loaded).toContain('cli/commands/info.js');
    // The commands' entry loads (its rewrite defers each command module): no other command does.
    const others = info.loaded.filter((f) => f.startsWith('cli/commands/') && f !== 'cli/commands/info.js');
    expect(others).toEqual(['cli/commands/index.js']);
    expect(info.loaded.filter((f) => /^(view|fleet|record|query)\//.test(f))).toEqual([]);
    const help = run('--help');
    expect(help.status).toBe(0);
    for (const name of [
      'info',
      'dump',
      'convert',
      'top',
      'record',
      'downgrade',
      'flame',
      'diff',
      'merge',
      'export',
      'sql',
      'recover',
      'leaks',
    ])
      expect(help.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    rmSync(path.dirname(preload), { recursive: true, force: true });
  });

  it('`profpack record --heap` loads the writer, none of the recorder that runs in the program, nor readers', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'profpack-lazy-record-'));
    const preload = path.join(dir, 'listing.cjs');
    // Every module and builtin this process loaded, printed at exit.
    writeFileSync(
      preload,
      `process.on('exit', () => require('fs').writeSync(2, '\\nLOADED ' + JSON.stringify({
        files: Object.keys(require.cache).map((f) => f.slice(f.indexOf('/dist/') >= 0 ? f.indexOf('/dist/') + 6 : 0)),
        builtins: process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)),
      })));`,
    );
    const cli = path.join(repoRoot, 'dist', 'cli', 'main.js');
    // Busy for a while: the writer flushes its recovery journal at least once (--flush-ms 10), and removes it.
    const app =
      'const kept = []; for (let i = 0; i < 2e5; i++) kept.push({ i }); const t = Date.now(); while (Date.now() - t < 200);';
    const out = path.join(dir, 'heap.tach');
    const r = spawnSync(
      process.execPath,
      [
        '-r',
        preload,
        cli,
        'record',
        '--heap',
        '--no-cpu',
        '--flush-ms',
        '10',
        '-o',
        out,
        '--',
        process.execPath,
        '-e',
        app,
      ],
      { cwd: repoRoot, encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/wrote .*heap\.tach: heap only/);
    const { files, builtins } = JSON.parse(/LOADED (.*)$/.exec(r.stderr)![1]!) as Record<
      'files' | 'builtins',
      string[]
    >;
    expect(files).toEqual(expect.arrayContaining(['record/writer/host.js', 'tachyon/write/writer.js']));
    // The program's side (the preload loads these), the readers, the JS block coders (the native engine writes)
    // and the zstd fallback's decoders (zstd-napi writes).
    const unusedPatterns = [
      /^record\/(start|program)\//,
      /^tachyon\/read\//,
      /^tachyon\/codec\/(block-reader|heap\/decode|model\/section)\.js$/,
      // The native engine codes the sample blocks; the JS twin's (PROFPACK_BACKEND=js, inherited) uses these.
      ...(backend.name === 'native' ? [/^tachyon\/codec\/(blocks|predict)\.js$/] : []),
      /^convert\//,
      /node_modules\/fzstd\//,
      // Version 1's engines (heap files are version 2), the fallback's API over them (zstd-napi's binding is the
      // API), the reader's checks the tables' error paths use, the inspector helpers, main.js's catch of a closed
      // stdout.
      /^tachyon\/write\/engines\/(js|native)\.js$/,
      /^tachyon\/file\/(zstd\/fallback|layout|header)\.js$/,
      /^v8\/inspector\.js$/,
      /^cli\/output\.js$/,
    ];
    const unused = files.filter((f) => unusedPatterns.some((p) => p.test(f)));
    expect(unused).toEqual([]);
    // rimraf: Node 20 compiles it for fs.rmSync (the journal is removed with unlink).
    expect(builtins.filter((b) => ['zlib', 'inspector', 'internal/fs/rimraf'].includes(b))).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });
});
