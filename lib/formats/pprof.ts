/**
 * The pprof adapter (google/pprof's profile.proto, gzipped or not): reading
 * in pprof-read.ts (tables in pprof-tables.ts), writing in pprof-write.ts,
 * the wire in pprof-proto.ts.
 */
import { constants, gunzipSync } from 'node:zlib';
import { ErrorCode, ProfpackError } from '../errors';
import type { FormatAdapter, ReadInput, ReadOptions } from './adapter';
import { badPprof, ProfileField, ProtoReader, WireType } from './pprof-proto';
import { PprofSource } from './pprof-read';
import { writePprof, type PprofWriteOptions } from './pprof-write';

export { PprofSource } from './pprof-read';
export { writePprof, type PprofWriteOptions } from './pprof-write';
export { PprofLabel, NOT_EPOCH_COMMENT, THREAD_ID_KEYS, THREAD_NAME_KEYS } from './pprof-proto';

export interface PprofReadOptions extends ReadOptions {
  /** Largest profile.proto a gzipped file may inflate to (default 1 GiB): a small gzip can hold a huge file. */
  maxInflatedBytes?: number;
}

export const DEFAULT_MAX_INFLATED_BYTES = 1 << 30;

export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** gunzip with a bound on the output, so a gzip bomb is a coded error and not an out-of-memory abort. */
export function gunzipBounded(bytes: Uint8Array, maxBytes = DEFAULT_MAX_INFLATED_BYTES): Uint8Array {
  try {
    return gunzipSync(bytes, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new ProfpackError(`the gzip data inflates to more than ${maxBytes} bytes`, {
        code: ErrorCode.CONVERT_TOO_MANY_SAMPLES,
        expected: `at most ${maxBytes} bytes inflated (maxInflatedBytes)`,
        cause: err,
      });
    }
    throw new ProfpackError('the gzip data is corrupt', { code: ErrorCode.CONVERT_BAD_INPUT, expected: 'a complete gzip stream', cause: err });
  }
}

/** The first bytes a gzipped file inflates to (for detection; never more than `max`). */
export function gunzipHead(bytes: Uint8Array, max = 4096): Uint8Array {
  try {
    const head = gunzipSync(bytes.subarray(0, 16384), { finishFlush: constants.Z_SYNC_FLUSH });
    return head.subarray(0, max);
  } catch {
    return new Uint8Array(0);
  }
}

/** Wire type each profile.proto field has (comment may be packed or not). */
const FIELD_WIRE: Record<number, number[]> = {
  [ProfileField.sampleType]: [WireType.bytes],
  [ProfileField.sample]: [WireType.bytes],
  [ProfileField.mapping]: [WireType.bytes],
  [ProfileField.location]: [WireType.bytes],
  [ProfileField.function]: [WireType.bytes],
  [ProfileField.stringTable]: [WireType.bytes],
  [ProfileField.dropFrames]: [WireType.varint],
  [ProfileField.keepFrames]: [WireType.varint],
  [ProfileField.timeNanos]: [WireType.varint],
  [ProfileField.durationNanos]: [WireType.varint],
  [ProfileField.periodType]: [WireType.bytes],
  [ProfileField.period]: [WireType.varint],
  [ProfileField.comment]: [WireType.varint, WireType.bytes],
  [ProfileField.defaultSampleType]: [WireType.varint],
  [ProfileField.docUrl]: [WireType.bytes],
};

/**
 * Whether the first bytes (gzip undone) read as profile.proto: every field
 * in them is one of Profile's with its wire type (text and the other binary
 * formats fail within a few bytes: JSON's "{" is field 15 with wire type 3,
 * Tachyon's "HCAT" a fixed64 keep_frames). Only a 4 KiB head may end inside
 * a field; a shorter head is the whole file.
 */
export function detectPprof(head: Uint8Array): boolean {
  const r = new ProtoReader(head);
  let fields = 0;
  try {
    while (!r.done) {
      const tag = r.tag();
      const wire = FIELD_WIRE[tag >>> 3];
      if (wire === undefined || !wire.includes(tag & 7)) return false;
      if ((tag & 7) === WireType.bytes) {
        const n = r.length();
        if (r.pos + n > head.length) return head.length >= 4096;
        r.pos += n;
      } else r.int64();
      fields++;
    }
  } catch {
    // A varint cut by the end of the head.
    return fields > 0 && head.length >= 4096;
  }
  return fields > 0;
}

/** Reads pprof bytes (gzipped or not) as a model source. */
export function readPprof(bytes: Uint8Array, options: PprofReadOptions = {}): PprofSource {
  const raw = isGzip(bytes) ? gunzipBounded(bytes, options.maxInflatedBytes) : bytes;
  if (raw.length > 0 && !detectPprof(raw.subarray(0, 4096))) throw badPprof('the bytes are not a protobuf Profile message', 0);
  return new PprofSource(raw, options);
}

export const pprofAdapter: FormatAdapter = {
  name: 'pprof',
  title: 'pprof (profile.proto)',
  extensions: ['.pb.gz', '.pprof', '.pb'],
  mayBeGzipped: true,
  detect: detectPprof,
  read(input: ReadInput, options: ReadOptions) {
    if (input.bytes === undefined) throw new ProfpackError('pprof is read from its bytes', { code: ErrorCode.INVALID_ARGUMENT, expected: 'ReadInput.bytes' });
    return readPprof(input.bytes, options);
  },
  write(source, target, options) {
    writePprof(source, target, options as PprofWriteOptions);
  },
};
