/**
 * The one capability probe: is the native addon loaded, and if not, why; and
 * where zstd comes from.
 *
 * PROFPACK_BACKEND=js forces the pure-JS twin; PROFPACK_BACKEND=native makes a
 * failed load an error. Otherwise a failed load falls back to JS and warns
 * once (code PROFPACK_NO_NATIVE).
 *
 * zstd is chosen on its first use (or the first read of backend.zstd), not at
 * load, so `require('profpack')` loads no zstd: 1. zstd-napi, an optional
 * dependency (a native addon), reads and writes; 2. else Node's built-in zstd
 * (node:zlib, Node >= 22.15) reads and writes; 3. else fzstd (pure JS) reads,
 * and a writer given no compression writes none, said once (defaultCompression
 * in tachyon/file/zstd/binding.ts); an explicit zstd throws ERR_NATIVE_UNAVAILABLE.
 * PROFPACK_ZSTD=napi|node|fzstd forces one (tests, diagnosis):
 * forcing one this process lacks is an error at the first zstd use.
 */
import * as path from 'node:path';
import nodeGypBuild from 'node-gyp-build';
import { ErrorCode, ProfpackError } from './errors';

export type BackendName = 'native' | 'js';

/** Where zstd comes from (see above). */
export type ZstdProvider = 'napi' | 'node' | 'fzstd';

/** What the addon detected about this machine (all false under the JS twin). */
export interface BackendFeatures {
  sse41: boolean;
  avx2: boolean;
  bmi2: boolean;
  popcnt: boolean;
  fastPext: boolean;
  /** Whether the batch varint decoders use BMI2's pext: the avx2 level on a CPU with fast pext. */
  pext: boolean;
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
  /** The zstd provider, chosen on this first read if no zstd call has yet (a bad PROFPACK_ZSTD throws here). */
  readonly zstd: ZstdProvider;
}

/** The package root: lib/ (sources under vitest) and dist/ both sit one level below it. */
export const packageRoot = path.resolve(__dirname, '..');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type NativeAddon = Record<string, any> & { setErrorClass(cls: typeof ProfpackError): void; features: BackendFeatures };

let addon: NativeAddon | null = null;

function jsFeatures(): BackendFeatures {
  return {
    sse41: false,
    avx2: false,
    bmi2: false,
    popcnt: false,
    fastPext: false,
    pext: false,
    neon: false,
    mmap: false,
    littleEndian: new Uint8Array(new Uint16Array([1]).buffer)[0] === 1,
  };
}

function probe(): Omit<Backend, 'zstd'> {
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

const state: Omit<Backend, 'zstd'> = probe();

/** The backend in use for this process. */
export const backend: Backend = Object.defineProperty(state, 'zstd', {
  get: () => zstdChoice().provider,
  // Not enumerable: printing or spreading the backend must not load zstd or throw for a bad PROFPACK_ZSTD.
  enumerable: false,
}) as Backend;

let zstd: { provider: ZstdProvider; napiBinding: unknown } | undefined;

function loadZstdNapi(): unknown {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('zstd-napi/binding');
  } catch (err) {
    // A failed require's message carries its require stack: keep the first line.
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    throw new ProfpackError(`PROFPACK_ZSTD=napi but zstd-napi did not load: ${why}`, {
      code: ErrorCode.NATIVE_UNAVAILABLE,
      cause: err,
    });
  }
}

function nodeHasZstd(): boolean {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const zlib = require('node:zlib') as Record<string, unknown>;
  return typeof zlib.zstdCompressSync === 'function' && typeof zlib.zstdDecompressSync === 'function';
}

function chooseZstd(): { provider: ZstdProvider; napiBinding: unknown } {
  const forced = (process.env.PROFPACK_ZSTD ?? '').trim().toLowerCase();
  if (forced === 'napi') return { provider: 'napi', napiBinding: loadZstdNapi() };
  if (forced === 'node') {
    if (!nodeHasZstd()) {
      throw new ProfpackError(
        `PROFPACK_ZSTD=node but Node ${process.versions.node} has no built-in zstd (22.15 and later have it)`,
        {
          code: ErrorCode.NATIVE_UNAVAILABLE,
        },
      );
    }
    return { provider: 'node', napiBinding: undefined };
  }
  if (forced === 'fzstd') return { provider: 'fzstd', napiBinding: undefined };
  if (forced !== '' && forced !== 'auto') {
    throw new ProfpackError(`PROFPACK_ZSTD must be "napi", "node", "fzstd" or "auto", not "${forced}"`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'napi | node | fzstd | auto',
    });
  }
  try {
    return { provider: 'napi', napiBinding: loadZstdNapi() };
  } catch {
    return { provider: nodeHasZstd() ? 'node' : 'fzstd', napiBinding: undefined };
  }
}

/**
 * @internal The zstd this process uses, chosen once (lib/tachyon/file/zstd/binding.ts builds its API):
 * zstd-napi's binding when that is the provider.
 */
export function zstdChoice(): { provider: ZstdProvider; napiBinding: unknown } {
  zstd ??= chooseZstd();
  return zstd;
}

/**
 * The addon's functions for one concern (e.g. `nativeModule('varint')`), or
 * null under the JS twin. Concerns type the result with their own interface.
 */
export function nativeModule<T>(name: string): T | null {
  if (addon === null) return null;
  const mod = addon[name] as T | undefined;
  return mod ?? null;
}
