/**
 * Where zstd comes from, decided here once, on first use by every zstd path
 * (writer, reader, version 2):
 *   1. zstd-napi, an optional dependency (a native addon): reads and writes;
 *   2. else Node's built-in zstd (node:zlib, Node >= 22.15): reads and writes;
 *   3. else fzstd (pure JS): reads; writing zstd throws ERR_NATIVE_UNAVAILABLE
 *      and compression: 'none' still writes.
 * So profpack loads, and reads compressed files, where no addon could be built.
 * PROFPACK_ZSTD=napi|node|fzstd forces one (tests, diagnosis): forcing one
 * this process lacks is an error at the first zstd call.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { fallbackZstd, nodeZstd, type ZstdApi } from './zstd-fallback';

export type { ZstdApi, ZstdCCtx, ZstdDCtx } from './zstd-fallback';
export type ZstdProvider = 'napi' | 'node' | 'fzstd';

let loaded: { api: ZstdApi; provider: ZstdProvider } | undefined;

function loadNapi(): ZstdApi {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('zstd-napi/binding') as ZstdApi;
  } catch (err) {
    // A failed require's message carries its require stack: keep the first line.
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    throw new ProfpackError(`PROFPACK_ZSTD=napi but zstd-napi did not load: ${why}`, { code: ErrorCode.NATIVE_UNAVAILABLE, cause: err });
  }
}

function choose(): { api: ZstdApi; provider: ZstdProvider } {
  const forced = (process.env.PROFPACK_ZSTD ?? '').trim().toLowerCase();
  if (forced === 'napi') return { api: loadNapi(), provider: 'napi' };
  if (forced === 'node') {
    if (!nodeZstd) {
      throw new ProfpackError(`PROFPACK_ZSTD=node but Node ${process.versions.node} has no built-in zstd (22.15 and later have it)`, {
        code: ErrorCode.NATIVE_UNAVAILABLE,
      });
    }
    return { api: fallbackZstd('node'), provider: 'node' };
  }
  if (forced === 'fzstd') return { api: fallbackZstd('fzstd'), provider: 'fzstd' };
  if (forced !== '' && forced !== 'auto') {
    throw new ProfpackError(`PROFPACK_ZSTD must be "napi", "node", "fzstd" or "auto", not "${forced}"`, {
      code: ErrorCode.INVALID_ARGUMENT,
      expected: 'napi | node | fzstd | auto',
    });
  }
  try {
    return { api: loadNapi(), provider: 'napi' };
  } catch {
    return nodeZstd ? { api: fallbackZstd('node'), provider: 'node' } : { api: fallbackZstd('fzstd'), provider: 'fzstd' };
  }
}

export function zstdBinding(): ZstdApi {
  loaded ??= choose();
  return loaded.api;
}

/** Which zstd this process uses (loading it if no zstd call has yet). */
export function zstdProvider(): ZstdProvider {
  loaded ??= choose();
  return loaded.provider;
}
