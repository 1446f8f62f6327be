/**
 * The kernel level: chosen once by CPUID, forced by PROFPACK_SIMD (checked in
 * child processes, since the choice is made at load), shown as
 * backend.features.simd; a level the CPU lacks is refused, never replaced.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { backend } from '../../lib/backend';
import { svbNative } from '../../lib/svb/native';
import { repoRoot, sharedPath } from '../support/environment';

/** Loads the addon in a fresh node with PROFPACK_SIMD set; returns what it reports or the load error. */
// The child also encodes and decodes every 1234/0124/delta vector with the forced kernels.
function loadWith(simd: string): {
  features?: Record<string, unknown>;
  level?: string;
  varint?: string;
  error?: string;
  checked?: number;
  mismatches?: string[];
} {
  const script = `
    const fs = require('fs');
    const path = require('path');
    let addon;
    try {
      addon = require('node-gyp-build')(process.argv[1]);
    } catch (err) {
      console.log(JSON.stringify({ error: String(err && err.message) }));
      process.exit(0);
    }
    const dir = process.argv[2];
    const modes = { '1234': 0, 'delta1234': 1, '0124': 4 };
    const index = JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8'));
    const mismatches = [];
    let checked = 0;
    for (const vector of index.vectors) {
      const raw = fs.readFileSync(path.join(dir, vector.input.file));
      const values = new Uint32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
      for (const output of vector.outputs) {
        const mode = modes[output.variant];
        if (mode === undefined) continue;
        const expected = fs.readFileSync(path.join(dir, output.file));
        const out = new Uint8Array(Math.ceil(values.length / 4) + 4 * values.length);
        const length = addon.svb.encode(values, out, mode, output.prev || 0);
        if (!Buffer.from(out.buffer, 0, length).equals(expected)) mismatches.push('encode ' + output.file);
        const decoded = new Uint32Array(values.length);
        addon.svb.decode(new Uint8Array(expected), values.length, decoded, mode, output.prev || 0);
        if (!Buffer.from(decoded.buffer).equals(raw)) mismatches.push('decode ' + output.file);
        checked++;
      }
    }
    const varint = addon.varint.batchKernel();
    console.log(JSON.stringify({ features: addon.features, level: addon.svb.kernelLevel(), varint, checked, mismatches }));`;
  const run = spawnSync(process.execPath, ['-e', script, repoRoot, sharedPath('vectors', 'svb')], {
    cwd: repoRoot,
    env: { ...process.env, PROFPACK_SIMD: simd },
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').pop()!);
}

if (backend.name === 'native') {
  describe('SIMD kernel level (native)', () => {
    const levels = svbNative!.kernelLevels();

    it('PROFPACK_SIMD forces each level this CPU has, features.simd shows it, and its kernels match the vectors', () => {
      for (const level of levels) {
        const loaded = loadWith(level);
        expect(loaded.error).toBeUndefined();
        expect(loaded.features?.simd).toBe(level);
        expect(loaded.level).toBe(level);
        // BMI2's varint kernel belongs to the avx2 level, so forcing a lower level also runs the portable one.
        const pext = level === 'avx2' && backend.features.fastPext;
        expect(loaded.features?.pext).toBe(pext);
        expect(loaded.varint).toBe(pext ? 'bmi2' : 'portable');
        expect(loaded.mismatches).toEqual([]);
        expect(loaded.checked).toBeGreaterThanOrEqual(100);
      }
    });

    it('without PROFPACK_SIMD the best level the CPU has is chosen', () => {
      const loaded = loadWith('');
      expect(loaded.features?.simd).toBe(levels[levels.length - 1]);
      expect(levels[0]).toBe('scalar');
      if (backend.features.avx2) expect(levels).toContain('avx2');
      if (backend.features.sse41) expect(levels).toContain('sse41');
      // arm64 builds have the NEON kernels and every arm64 CPU runs them; x86 builds have none.
      expect(backend.features.neon).toBe(process.arch === 'arm64');
      expect(levels.includes('neon')).toBe(process.arch === 'arm64');
      if (process.arch === 'arm64') expect(levels).toEqual(['scalar', 'neon']);
    });

    it('an unknown PROFPACK_SIMD fails the load with a clear error', () => {
      const loaded = loadWith('avx9000');
      expect(loaded.error).toMatch(/PROFPACK_SIMD must be one of auto, scalar, sse41, avx2, neon/);
    });

    it('a level the CPU lacks is refused, not replaced', () => {
      const none = { sse41: false, avx2: false };
      expect(svbNative!.resolveSimdLevel('avx2', none).error).toMatch(
        /PROFPACK_SIMD=avx2 but this CPU lacks it \(best available: scalar\)/,
      );
      expect(svbNative!.resolveSimdLevel('sse41', none).error).toMatch(/lacks it/);
      expect(svbNative!.resolveSimdLevel('avx2', { sse41: true, avx2: false }).error).toMatch(/best available: sse41/);
      expect(svbNative!.resolveSimdLevel('', none)).toEqual({ level: 'scalar' });
      expect(svbNative!.resolveSimdLevel('auto', { sse41: true, avx2: true })).toEqual({ level: 'avx2' });
      expect(svbNative!.resolveSimdLevel(' AVX2 ', { sse41: true, avx2: true })).toEqual({ level: 'avx2' });
      expect(svbNative!.resolveSimdLevel('scalar', { sse41: true, avx2: true })).toEqual({ level: 'scalar' });
      const arm = { sse41: false, avx2: false, neon: true };
      expect(svbNative!.resolveSimdLevel('', arm)).toEqual({ level: 'neon' });
      expect(svbNative!.resolveSimdLevel(' NEON', arm)).toEqual({ level: 'neon' });
      expect(svbNative!.resolveSimdLevel('scalar', arm)).toEqual({ level: 'scalar' });
      expect(svbNative!.resolveSimdLevel('sse41', arm).error).toMatch(
        /PROFPACK_SIMD=sse41 but this CPU lacks it \(best available: neon\)/,
      );
      expect(svbNative!.resolveSimdLevel('neon', { sse41: true, avx2: true }).error).toMatch(
        /PROFPACK_SIMD=neon but this CPU lacks it \(best available: avx2\)/,
      );
      if (!backend.features.avx2) expect(() => svbNative!.setKernelLevel('avx2')).toThrow(/lacks it/);
      if (!backend.features.neon)
        expect(() => svbNative!.setKernelLevel('neon')).toThrow(/PROFPACK_SIMD=neon but this CPU lacks it/);
      expect(() => svbNative!.setKernelLevel('avx512')).toThrow(/PROFPACK_SIMD must be one of/);
    });

    it('the test hook switches the kernels of this process and reports the previous level', () => {
      const start = svbNative!.kernelLevel();
      expect(start).toBe(backend.features.simd);
      for (const level of levels) {
        const previous = svbNative!.setKernelLevel(level);
        expect(svbNative!.kernelLevel()).toBe(level);
        svbNative!.setKernelLevel(previous);
      }
      expect(svbNative!.kernelLevel()).toBe(start);
    });
  });
} else {
  describe('SIMD kernel level (JS backend)', () => {
    it('the JS twin loads no addon and reports no SIMD level', () => {
      expect(svbNative).toBeNull();
      expect(backend.features.simd).toBeUndefined();
    });
  });
}
