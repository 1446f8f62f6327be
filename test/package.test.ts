/**
 * The built package as users load it: `require('profpack')` and
 * `import ... from 'profpack'` (dist/, compiled by `npm test` first).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/environment';

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8', env: { ...process.env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const probe = `
  const names = ['ProfpackError', 'backend', 'varint'];
  const out = { backend: p.backend.name, missing: names.filter((n) => !(n in p)) };
  const enc = p.varint.encodeU32Many(Uint32Array.from([1, 300, 4294967295]));
  out.roundTrip = Array.from(p.varint.decodeU32Many(enc, 0, 3).values);
  try { p.varint.decodeU32(new Uint8Array([0x80])); } catch (e) { out.error = [e instanceof p.ProfpackError, e.code, e.offset]; }
  console.log(JSON.stringify(out));
`;

describe('package entry points', () => {
  it('dist/ is built', () => {
    expect(existsSync(path.join(repoRoot, 'dist', 'index.js'))).toBe(true);
    expect(existsSync(path.join(repoRoot, 'dist', 'index.mjs'))).toBe(true);
    expect(existsSync(path.join(repoRoot, 'dist', 'index.d.ts'))).toBe(true);
  });

  for (const [style, args] of [
    ['require', ['-e', `const p = require('profpack');${probe}`]],
    ['import', ['--input-type=module', '-e', `import * as p from 'profpack';${probe}`]],
  ] as const) {
    it(`${style}('profpack') gives the same API on this backend`, () => {
      const r = run([...args]);
      expect(r.stderr).not.toMatch(/Error/);
      expect(r.status).toBe(0);
      const out = JSON.parse(r.stdout.trim());
      expect(out.backend).toBe(process.env.PROFPACK_BACKEND === 'js' ? 'js' : 'native');
      expect(out.missing).toEqual([]);
      expect(out.roundTrip).toEqual([1, 300, 4294967295]);
      expect(out.error).toEqual([true, 'ERR_VARINT_TRUNCATED', 0]);
    });
  }

  it('PROFPACK_BACKEND=native fails loudly when the addon cannot load; auto falls back with one warning', () => {
    const script = `
      const Module = require('module');
      const orig = Module._load;
      Module._load = function (req, ...rest) { if (String(req).endsWith('.node')) throw new Error('simulated load failure'); return orig.call(this, req, ...rest); };
      let warnings = [];
      process.on('warning', (w) => warnings.push(w.code));
      try { const p = require('profpack'); setImmediate(() => console.log(JSON.stringify({ name: p.backend.name, reason: p.backend.reason, warnings }))); }
      catch (e) { console.log(JSON.stringify({ error: e.code, name: e.name })); }
    `;
    const forced = spawnSync(process.execPath, ['-e', script], {
      cwd: repoRoot,
      encoding: 'utf8',
      env: { ...process.env, PROFPACK_BACKEND: 'native' },
    });
    expect(JSON.parse(forced.stdout.trim())).toEqual({ error: 'ERR_NATIVE_UNAVAILABLE', name: 'ProfpackError' });
    const auto = spawnSync(process.execPath, ['-e', script], {
      cwd: repoRoot,
      encoding: 'utf8',
      env: { ...process.env, PROFPACK_BACKEND: '' },
    });
    const out = JSON.parse(auto.stdout.trim());
    expect(out.name).toBe('js');
    expect(out.reason).toMatch(/simulated load failure/);
    expect(out.warnings).toEqual(['PROFPACK_NO_NATIVE']);
  });
});
