/**
 * zstd-napi, loaded on first use by every zstd path (writer, reader,
 * version 2): it is a native addon too, and profpack — JS backend,
 * uncompressed files — must still load where it cannot. When it is missing,
 * the first zstd call says so with one ProfpackError.
 */
import type * as Binding from 'zstd-napi/binding';
import { ErrorCode, ProfpackError } from '../../errors';

let loaded: typeof Binding | undefined;

export function zstdBinding(): typeof Binding {
  if (loaded === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      loaded = require('zstd-napi/binding') as typeof Binding;
    } catch (err) {
      // A failed require's message carries its require stack: keep the first line.
      const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
      throw new ProfpackError(`zstd needs zstd-napi, which did not load: ${why}`, { code: ErrorCode.NATIVE_UNAVAILABLE, cause: err });
    }
  }
  return loaded;
}
