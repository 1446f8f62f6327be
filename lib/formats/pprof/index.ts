/**
 * The pprof adapter (google/pprof's profile.proto, gzipped or not): reading
 * in read.ts (tables in tables.ts), writing in write.ts,
 * the wire in proto.ts.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { DEFAULT_MAX_INFLATED_BYTES, gunzipBounded, isGzip } from '../gzip';

export { DEFAULT_MAX_INFLATED_BYTES, gunzipBounded, isGzip };
import type { FormatAdapter, ReadInput, ReadOptions } from '../adapter';
import { ProfileField, ProtoReader, WireType } from './proto';
import { PprofSource } from './read';
import { writePprof } from './write';
import { HEAD_BYTES } from '../sniff';

export { PprofSource } from './read';
export { writePprof, type PprofWriteOptions } from './write';
export { PprofLabel, NOT_EPOCH_COMMENT, THREAD_ID_KEYS, THREAD_NAME_KEYS } from './proto';

/** ReadOptions.maxInflatedBytes bounds a gzipped file's profile.proto. */
export type PprofReadOptions = ReadOptions;

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
 * Whether the first bytes (gzip undone: the registry inflates a head once)
 * read as profile.proto: every field in them is one of Profile's with its wire
 * type (text and the other binary formats fail within a few bytes: JSON's "{"
 * is field 15 with wire type 3, Tachyon's "HCAT" a fixed64 keep_frames). Only
 * a head that stops before the file's end (`partial`) may end inside a field.
 */
export function detectPprof(bytes: Uint8Array, partial = bytes.length >= HEAD_BYTES): boolean {
  const head = bytes.subarray(0, HEAD_BYTES);
  const r = new ProtoReader(head);
  let fields = 0;
  try {
    while (!r.done) {
      const tag = r.tag();
      const wire = FIELD_WIRE[tag >>> 3];
      if (wire === undefined || !wire.includes(tag & 7)) return false;
      if ((tag & 7) === WireType.bytes) {
        const n = r.length();
        if (r.pos + n > head.length) return partial;
        r.pos += n;
      } else r.int64();
      fields++;
    }
  } catch {
    // A varint cut by the end of the head.
    return fields > 0 && partial;
  }
  return fields > 0;
}

/** Reads pprof bytes (gzipped or not) as a model source. */
export function readPprof(bytes: Uint8Array, options: PprofReadOptions = {}): PprofSource {
  // No detect() here: the scan checks every field's wire type and names the offset that is wrong.
  return new PprofSource(isGzip(bytes) ? gunzipBounded(bytes, options.maxInflatedBytes) : bytes, options);
}

export const pprofAdapter: FormatAdapter<'pprof'> = {
  name: 'pprof',
  title: 'pprof (profile.proto)',
  label: 'pprof',
  extensions: ['.pprof.gz', '.pb.gz', '.pprof', '.pb'],
  mayBeGzipped: true,
  detect: detectPprof,
  read(input: ReadInput, options: ReadOptions) {
    if (input.bytes === undefined)
      throw new ProfpackError('pprof is read from its bytes', {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: 'ReadInput.bytes',
      });
    return readPprof(input.bytes, options);
  },
  write(source, target, options) {
    writePprof(source, target, options);
  },
};
