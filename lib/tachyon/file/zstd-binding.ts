/**
 * The zstd API every zstd path uses (writer, reader, version 2, recover), built
 * for the provider lib/backend.ts chose (zstd-napi, Node's zstd or fzstd; see
 * there): zstd-napi's binding, or zstd-fallback.ts's API over the other two.
 */
import { zstdChoice, type ZstdProvider } from '../../backend';
import { fallbackZstd, type ZstdApi } from './zstd-fallback';

export type { ZstdApi, ZstdCCtx, ZstdDCtx } from './zstd-fallback';
export type { ZstdProvider } from '../../backend';

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
