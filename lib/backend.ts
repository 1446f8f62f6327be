/**
 * The one capability probe: is the native addon loaded, and if not, why.
 *
 * PROFPACK_BACKEND=js forces the pure-JS twin; PROFPACK_BACKEND=native makes a
 * failed load an error. Otherwise a failed load falls back to JS and warns
 * once (code PROFPACK_NO_NATIVE).
 */
import * as path from 'node:path';
import nodeGypBuild from 'node-gyp-build';
import { ErrorCode, ProfpackError } from './errors';

export type BackendName = 'native' | 'js';

/** What the addon detected about this machine (all false under the JS twin). */
export interface BackendFeatures {
  sse41: boolean;
  avx2: boolean;
  bmi2: boolean;
  popcnt: boolean;
  fastPext: boolean;
  /** arm64 Advanced SIMD (every AArch64 CPU has it). */
  neon: boolean;
  mmap: boolean;
  littleEndian: boolean;
  [feature: string]: boolean | string;
}

export interface Backend {
  readonly name: BackendName;
  /** Why the JS twin is in use (the load error text, or the forcing variable). */
  readonly reason: string | undefined;
  readonly features: BackendFeatures;
}

/** The package root: lib/ (sources under vitest) and dist/ both sit one level below it. */
export const packageRoot = path.resolve(__dirname, '..');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type NativeAddon = Record<string, any> & { setErrorClass(cls: typeof ProfpackError): void; features: BackendFeatures };

let addon: NativeAddon | null = null;

function jsFeatures(): BackendFeatures {
  return { sse41: false, avx2: false, bmi2: false, popcnt: false, fastPext: false, neon: false, mmap: false, littleEndian: new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 };
}

function probe(): Backend {
  const requested = (process.env.PROFPACK_BACKEND ?? '').trim().toLowerCase();
  if (requested === 'js') {
    return { name: 'js', reason: 'forced by PROFPACK_BACKEND=js', features: jsFeatures() };
  }
  if (requested !== '' && requested !== 'native' && requested !== 'auto') {
    throw new ProfpackError(`PROFPACK_BACKEND must be "native", "js" or "auto", not "${requested}"`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'native | js | auto',
    });
  }
  try {
    const loaded = nodeGypBuild(packageRoot) as NativeAddon;
    loaded.setErrorClass(ProfpackError);
    addon = loaded;
    return { name: 'native', reason: undefined, features: { ...loaded.features } };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    if (requested === 'native') {
      throw new ProfpackError(`PROFPACK_BACKEND=native but the native addon did not load: ${reason}`, {
        code: ErrorCode.NATIVE_UNAVAILABLE,
        cause: err,
      });
    }
    process.emitWarning(`profpack: native addon unavailable, using the pure-JS backend (${reason})`, {
      code: 'PROFPACK_NO_NATIVE',
    });
    return { name: 'js', reason, features: jsFeatures() };
  }
}

const state: Backend = probe();

/** The backend in use for this process. */
export const backend: Backend = state;

/**
 * The addon's functions for one concern (e.g. `nativeModule('varint')`), or
 * null under the JS twin. Concerns type the result with their own interface.
 */
export function nativeModule<T>(name: string): T | null {
  if (addon === null) return null;
  const mod = addon[name] as T | undefined;
  return mod ?? null;
}
