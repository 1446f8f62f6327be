/**
 * The native reader (native/tachyon/read/reader_napi.cc), or null under the JS
 * backend: the file mapping and the record decoder, same contract as the JS
 * twin (records.ts).
 */
import { nativeModule } from '../../backend';
import type { ErrorCodeValue } from '../../errors';

export interface NativeFile {
  readonly size: number;
  /** true when mmap'ed; false when it fell back to read(). */
  readonly mapped: boolean;
}

export interface NativeDecodeError {
  code: ErrorCodeValue;
  message: string;
  offset: number;
}

export interface NativeTachyonReader {
  /**
   * Maps `size` bytes of a descriptor the caller opened and keeps (MAP_POPULATE,
   * madvise), or preads them where mapping fails; `path` is for messages.
   */
  openFile(fd: number, size: number, path: string): NativeFile;
  /**
   * A copy of bytes [start, end) of the file; ERR_TACHYON_FILE_CHANGED if the file shrank under the mapping (SIGBUS,
   * caught).
   */
  readRange(file: NativeFile, start: number, end: number): Uint8Array;
  closeFile(file: NativeFile): void;
  /** FNV-1a 64 of a descriptor's first `head` and last `tail` bytes, by pread (lib/input.ts edgeHash is its twin). */
  edgeHash(fd: number, size: number, head: number, tail: number): bigint | null;
  /** A decoder writing into the given buffers (kept alive by the decoder). */
  createDecoder(
    littleEndian: boolean,
    startTimeUs: bigint,
    threadCount: number,
    totalSize: number,
    events: Uint32Array,
    timestamps: BigUint64Array,
    nodes: Uint32Array,
    result: Float64Array,
    maxNodes: number,
  ): object;
  decodeBytes(
    decoder: object,
    window: Uint8Array,
    windowStart: number,
    length: number,
    final: boolean,
  ): NativeDecodeError | null;
  /**
   * Decodes file bytes [fileOffset, fileOffset + length) of a mapped file in
   * place; a SIGBUS (the file shrank) is caught and returned as
   * ERR_TACHYON_FILE_CHANGED, after which the decoder is released.
   */
  decodeFile(
    decoder: object,
    file: NativeFile,
    fileOffset: number,
    windowStart: number,
    length: number,
    final: boolean,
  ): NativeDecodeError | null;
  /** Frees the decoder's native memory now; later calls with it throw ERR_TACHYON_READER_CLOSED. */
  releaseDecoder(decoder: object): void;
  /** [repeatRecords, repeatSamples, fullRecords, suffixRecords, popPushRecords, totalSamples, stackReconstructions] */
  decoderStats(decoder: object): Float64Array;
}

export function nativeReader(): NativeTachyonReader | null {
  return nativeModule<NativeTachyonReader>('tachyonReader');
}
