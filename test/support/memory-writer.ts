/** A ProfileWriter whose file is a buffer (its internal options, as V2FileWriter.inMemory had them). */
import { ProfileWriter } from '../../lib/tachyon/write/writer';
import { WRITER_INTERNALS, type WriterInternals } from '../../lib/tachyon/write/trailer';
import type { ProfileWriterOptions } from '../../lib/tachyon/write/types';
import { ByteSink } from '../../lib/byte-sink';

export function memoryWriter(
  options: ProfileWriterOptions,
  internals: Omit<WriterInternals, 'memory'> = {},
): { writer: ProfileWriter; bytes(): Uint8Array } {
  const memory = new ByteSink(1 << 16);
  const writer = new ProfileWriter('<memory>', {
    ...options,
    [WRITER_INTERNALS]: { ...internals, memory },
  } as ProfileWriterOptions);
  return { writer, bytes: () => memory.take() };
}
