/**
 * profile.proto on the wire: its field numbers, the label keys profpack and
 * other tools write, and a small bounds-checked reader of protobuf fields.
 * pprof-format's decoder builds one object per sample and per value; the
 * reader here walks the bytes in place, so a file of 30 M samples costs its
 * bytes and the tables, never 30 M objects.
 */
import { ErrorCode, ProfpackError } from '../../errors';

/** Field numbers of google/pprof's profile.proto (proto3). */
export const ProfileField = {
  sampleType: 1,
  sample: 2,
  mapping: 3,
  location: 4,
  function: 5,
  stringTable: 6,
  dropFrames: 7,
  keepFrames: 8,
  timeNanos: 9,
  durationNanos: 10,
  periodType: 11,
  period: 12,
  comment: 13,
  defaultSampleType: 14,
  docUrl: 15,
} as const;

export const ValueTypeField = { type: 1, unit: 2 } as const;
export const SampleField = { locationId: 1, value: 2, label: 3 } as const;
export const LabelField = { key: 1, str: 2, num: 3, numUnit: 4 } as const;
export const MappingField = { id: 1, filename: 5 } as const;
export const LocationField = { id: 1, mappingId: 2, address: 3, line: 4 } as const;
export const LineField = { functionId: 1, line: 2, column: 3 } as const;
export const FunctionField = { id: 1, name: 2, systemName: 3, filename: 4 } as const;

export const WireType = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 } as const;

/** Label keys with a meaning beyond "a label". */
export const PprofLabel = {
  threadId: 'thread_id',
  interpreterId: 'interpreter_id',
  status: 'status',
  timestampUs: 'timestamp_us',
  threadName: 'thread_name',
  /** @datadog/pprof's per-sample end time (withContexts), ns since the epoch. */
  endTimestampNs: 'end_timestamp_ns',
} as const;

/** What `origin.producer` says of a pprof written by @datadog/pprof (its time labels are end_timestamp_ns). */
export const DATADOG = '@datadog/pprof';

/** Label keys read as the thread id, most preferred first (profpack, Datadog's text ones, Linux tools). */
export const THREAD_ID_KEYS: readonly string[] = [
  PprofLabel.threadId,
  'thread id',
  'tid',
  'thread_native_id',
  'os thread id',
  'os_thread_id',
  'native thread id',
];
export const THREAD_NAME_KEYS: readonly string[] = [
  PprofLabel.threadName,
  'thread name',
  'threadName',
  'thread_native_name',
];

/**
 * Go's profile parser drops a numeric label whose value and unit are both 0,
 * so thread 0 would vanish from `-tags` and `-tagfocus`: ids carry this unit.
 */
export const ID_UNIT = 'id';

/** The comment a profile gets when its source's clock is not the Unix epoch. */
export const NOT_EPOCH_COMMENT =
  'profpack: the source clock is not the Unix epoch: ' +
  'time_nanos is 0 and timestamp_us labels count from an unknown origin';

const TWO_POW_32 = 4294967296;
const EXPECTED = 'profile.proto (google/pprof), optionally gzipped';

export function badPprof(message: string, offset?: number, expected = EXPECTED): ProfpackError {
  return new ProfpackError(`not a valid pprof profile: ${message}`, {
    code: ErrorCode.CONVERT_BAD_INPUT,
    offset,
    expected,
  });
}

/**
 * A cursor over protobuf bytes. Every read checks the end it was given; a
 * varint is read as lo/hi 32-bit halves so int64 values are exact (as a
 * number within ±2^53, as a bigint beyond).
 */
export class ProtoReader {
  pos: number;
  /** The halves of the last varint read, for `lastBigInt`. */
  lo = 0;
  hi = 0;

  constructor(
    readonly bytes: Uint8Array,
    pos = 0,
    public end = bytes.length,
  ) {
    this.pos = pos;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** A varint as int64 in a number (exact within ±2^53). */
  int64(): number {
    if (this.short()) return this.lo;
    this.varint();
    return (this.hi | 0) * TWO_POW_32 + this.lo;
  }

  /** A varint as uint64 in a number (exact below 2^53). */
  uint64(): number {
    if (this.short()) return this.lo;
    this.varint();
    return this.hi * TWO_POW_32 + this.lo;
  }

  /** Reads a varint of up to 3 bytes (ids, counts, most values) into lo; false (nothing read) for longer ones. */
  private short(): boolean {
    const b = this.bytes;
    const p = this.pos;
    if (p + 3 > this.end) {
      if (p < this.end && b[p]! < 0x80) {
        this.lo = b[p]!;
        this.hi = 0;
        this.pos = p + 1;
        return true;
      }
      return false;
    }
    const b0 = b[p]!;
    if (b0 < 0x80) {
      this.lo = b0;
      this.pos = p + 1;
    } else {
      const b1 = b[p + 1]!;
      if (b1 < 0x80) {
        this.lo = (b0 & 0x7f) | (b1 << 7);
        this.pos = p + 2;
      } else {
        const b2 = b[p + 2]!;
        if (b2 >= 0x80) return false;
        this.lo = (b0 & 0x7f) | ((b1 & 0x7f) << 7) | (b2 << 14);
        this.pos = p + 3;
      }
    }
    this.hi = 0;
    return true;
  }

  /** The last varint read as an exact signed int64. */
  lastBigInt(): bigint {
    return BigInt.asIntN(64, (BigInt(this.hi) << 32n) | BigInt(this.lo));
  }

  /** A varint that must be a count or index that fits in memory. */
  length(): number {
    const at = this.pos;
    const n = this.uint64();
    if (this.hi !== 0 || n > 0x7fffffff) throw badPprof(`length ${this.lastBigInt()} is out of range`, at);
    return n;
  }

  /** The next field's tag: field number * 8 + wire type. */
  tag(): number {
    const at = this.pos;
    const t = this.uint64();
    if (this.hi !== 0 || t > 0x7fffffff) throw badPprof('field tag out of range', at, 'a protobuf field tag');
    return t;
  }

  /** The end of the length-delimited field that starts here (the length read), checked against the end. */
  sub(): number {
    const at = this.pos;
    const n = this.length();
    const end = this.pos + n;
    if (end > this.end)
      throw badPprof(
        `a field of ${n} bytes runs past the end of its message (${this.end - this.pos} bytes left)`,
        at,
        'a length within the message',
      );
    return end;
  }

  /** Skips a field's value by its wire type. */
  skip(wireType: number, tagAt: number): void {
    switch (wireType) {
      case WireType.varint:
        this.varint();
        return;
      case WireType.fixed64:
        this.advance(8, tagAt);
        return;
      case WireType.bytes:
        this.pos = this.sub();
        return;
      case WireType.fixed32:
        this.advance(4, tagAt);
        return;
      default:
        throw badPprof(`wire type ${wireType} (groups are not in profile.proto)`, tagAt, 'wire type 0, 1, 2 or 5');
    }
  }

  private advance(n: number, at: number): void {
    if (this.pos + n > this.end) throw badPprof('a fixed-width field is cut short', at);
    this.pos += n;
  }

  private varint(): void {
    const b = this.bytes;
    const start = this.pos;
    let lo = 0;
    let hi = 0;
    let i = 0;
    let byte = 0x80;
    for (; i < 10 && byte >= 0x80; i++) {
      if (this.pos >= this.end) throw badPprof('a varint is cut short', start, 'a complete varint');
      byte = b[this.pos++]!;
      const bits = byte & 0x7f;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= bits << 28;
        hi = bits >>> 4;
      } else hi |= bits << (7 * i - 32);
    }
    if (byte >= 0x80) throw badPprof('a varint is longer than 10 bytes', start, 'a varint of at most 10 bytes');
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
  }
}
