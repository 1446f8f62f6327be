/**
 * Fixed-width slots for values patched later (seed 001's lesson: GHC reserved
 * a varint-sized placeholder for a file offset, patched it with a longer
 * varint and overwrote the data after it). A slot has a fixed width from the
 * moment it is reserved, and a value that does not fit is refused.
 */
import { ErrorCode, ProfpackError } from '../errors';
import { ByteSink } from '../byte-sink';

export type SlotWidth = 1 | 2 | 4 | 8;

export interface Slot {
  readonly offset: number;
  readonly width: SlotWidth;
}

/** Where slots live: something that appends bytes and can overwrite earlier ones. */
export interface PatchableSink {
  /** Offset the next appended byte will have. */
  readonly position: number;
  write(bytes: Uint8Array): void;
  writeAt(offset: number, bytes: Uint8Array): void;
}

/** An in-memory sink over the library's byte buffer. */
export class BufferSink implements PatchableSink {
  private readonly sink = new ByteSink(256);

  get position(): number {
    return this.sink.length;
  }

  write(bytes: Uint8Array): void {
    this.sink.append(bytes);
  }

  writeAt(offset: number, bytes: Uint8Array): void {
    if (offset < 0 || offset + bytes.length > this.sink.length) {
      throw new ProfpackError(
        `patch of ${bytes.length} bytes at ${offset} is outside the ${this.sink.length} bytes written`,
        {
          code: ErrorCode.SLOT_OUT_OF_RANGE,
          offset,
        },
      );
    }
    this.sink.bytes.set(bytes, offset);
  }

  /** The bytes written so far (a copy). */
  bytes(): Uint8Array {
    return this.sink.take();
  }
}

const MAX_BY_WIDTH: Record<SlotWidth, bigint> = { 1: 0xffn, 2: 0xffffn, 4: 0xffff_ffffn, 8: 0xffff_ffff_ffff_ffffn };

export class SlotWriter {
  private readonly sink: PatchableSink;
  private readonly littleEndian: boolean;

  constructor(sink: PatchableSink, options: { littleEndian?: boolean } = {}) {
    this.sink = sink;
    this.littleEndian = options.littleEndian ?? true;
  }

  /** Appends `width` zero bytes and returns the slot that covers them. */
  reserve(width: SlotWidth): Slot {
    if (!(width in MAX_BY_WIDTH)) {
      throw new ProfpackError(`slot width must be 1, 2, 4 or 8, not ${String(width)}`, {
        code: ErrorCode.INVALID_ARGUMENT,
      });
    }
    const slot: Slot = { offset: this.sink.position, width };
    this.sink.write(new Uint8Array(width));
    return slot;
  }

  /** Encodes `value` at the slot's fixed width; refuses a value that does not fit. */
  patch(slot: Slot, value: number | bigint): void {
    this.sink.writeAt(slot.offset, SlotWriter.encode(slot, value, this.littleEndian));
  }

  /** The exact bytes a slot would hold, without writing them. */
  static encode(slot: Slot, value: number | bigint, littleEndian = true): Uint8Array {
    if (typeof value === 'number' && !Number.isSafeInteger(value)) {
      throw new ProfpackError(`slot value ${value} is not a safe integer`, {
        code: ErrorCode.SLOT_OVERFLOW,
        offset: slot.offset,
      });
    }
    const big = BigInt(value);
    const max = MAX_BY_WIDTH[slot.width];
    if (big < 0n || big > max) {
      throw new ProfpackError(`value ${big} does not fit a ${slot.width}-byte slot`, {
        code: ErrorCode.SLOT_OVERFLOW,
        offset: slot.offset,
        expected: `an integer in [0, ${max}]`,
      });
    }
    const bytes = new Uint8Array(slot.width);
    const view = new DataView(bytes.buffer);
    switch (slot.width) {
      case 1:
        view.setUint8(0, Number(big));
        break;
      case 2:
        view.setUint16(0, Number(big), littleEndian);
        break;
      case 4:
        view.setUint32(0, Number(big), littleEndian);
        break;
      case 8:
        view.setBigUint64(0, big, littleEndian);
        break;
    }
    return bytes;
  }
}
