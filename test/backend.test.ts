import { describe, expect, it } from 'vitest';
import { backend } from '../lib/backend';
import { ProfpackError } from '../lib/errors';

describe('backend probe', () => {
  it('is the backend the run asked for', () => {
    const requested = process.env.PROFPACK_BACKEND;
    if (requested === 'native' || requested === 'js') {
      expect(backend.name).toBe(requested);
    }
    if (backend.name === 'js') expect(typeof backend.reason).toBe('string');
    else expect(backend.reason).toBeUndefined();
  });

  it('reports the features the addon detected', () => {
    for (const key of ['sse41', 'avx2', 'bmi2', 'fastPext', 'pext', 'neon', 'mmap', 'littleEndian'])
      expect(typeof backend.features[key]).toBe('boolean');
    if (backend.name === 'native') {
      expect(backend.features.neon).toBe(process.arch === 'arm64');
      if (process.arch === 'arm64')
        expect(backend.features.sse41 || backend.features.avx2 || backend.features.bmi2).toBe(false);
      expect(backend.features.mmap).toBe(process.platform === 'linux' || process.platform === 'darwin');
      if (backend.features.avx2) expect(backend.features.sse41).toBe(true);
      expect(backend.features.pext).toBe(backend.features.simd === 'avx2' && backend.features.fastPext);
    } else {
      expect(backend.features.avx2).toBe(false);
    }
  });

  it('hands native errors over as ProfpackError with a code and offset', async () => {
    const { decodeU32Many } = await import('../lib/varint/index');
    let caught: unknown;
    try {
      decodeU32Many(new Uint8Array([0x01, 0x80, 0x80]), 0, 2);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ProfpackError);
    expect((caught as ProfpackError).code).toBe('ERR_VARINT_TRUNCATED');
    expect((caught as ProfpackError).offset).toBe(1);
  });
});
