/**
 * The zstd API every zstd path uses (writer, reader, version 2, recover), built
 * for the provider lib/backend.ts chose (zstd-napi, Node's zstd or fzstd; see
 * there): zstd-napi's binding, or fallback.ts's API over the other two.
 */
import { zstdChoice, type ZstdProvider } from '../../../backend';
import { fallbackZstd, noZstdReason, type ZstdApi } from './fallback';

export { noZstdReason } from './fallback';

export type { ZstdApi, ZstdCCtx, ZstdDCtx } from './fallback';
export type { ZstdProvider } from '../../../backend';

let api: ZstdApi | undefined;

export function zstdBinding(): ZstdApi {
  if (api !== undefined) return api;
  const { provider, napiBinding } = zstdChoice();
  api = provider === 'napi' ? (napiBinding as ZstdApi) : fallbackZstd(provider);
  return api;
}

/** Which zstd this process uses (choosing it if no zstd call has yet): backend.zstd. */
export function zstdProvider(): ZstdProvider {
  return zstdChoice().provider;
}

/** Whether this process writes zstd: zstd-napi or Node's built-in zstd (fzstd only reads). */
export function canWriteZstd(): boolean {
  return zstdProvider() !== 'fzstd';
}

let saidNoZstd = false;

/**
 * The compression of a writer given none: zstd, or 'none' where this process
 * cannot write zstd (installed with no compiler on Node < 22.15), said once per
 * process through `say` (default: process.emitWarning, code PROFPACK_NO_ZSTD).
 * An explicit compression: 'zstd' is never downgraded: it fails, coded.
 */
export function defaultCompression(say?: (line: string) => void): 'zstd' | 'none' {
  if (canWriteZstd()) return 'zstd';
  if (!saidNoZstd) {
    saidNoZstd = true;
    const line = `${noZstdReason()}: writing uncompressed profiles`;
    if (say === undefined) process.emitWarning(`profpack: ${line}`, { code: 'PROFPACK_NO_ZSTD' });
    else say(line);
  }
  return 'none';
}
