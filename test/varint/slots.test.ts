import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProfpackError } from '../../lib/errors';
import { BufferSink, SlotWriter, encodeU32ToBytes, type SlotWidth } from '../../lib/varint/index';

describe('fixed-width slot writer (seed 001: a patched slot must have a fixed width)', () => {
  it('patches exactly its bytes, whatever was written after it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<SlotWidth>(1, 2, 4, 8),
        fc.uint8Array({ maxLength: 40 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.boolean(),
        fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
        (width, before, after, littleEndian, raw) => {
          const value = raw & ((1n << BigInt(width * 8)) - 1n);
          const sink = new BufferSink();
          const slots = new SlotWriter(sink, { littleEndian });
          sink.write(before);
          const slot = slots.reserve(width);
          sink.write(after);
          slots.patch(slot, value);
          const bytes = sink.bytes();
          expect(bytes.length).toBe(before.length + width + after.length);
          expect(bytes.subarray(0, before.length)).toEqual(before);
          expect(bytes.subarray(before.length + width)).toEqual(after);
          const view = new DataView(bytes.buffer, before.length, width);
          const read =
            width === 1
              ? BigInt(view.getUint8(0))
              : width === 2
                ? BigInt(view.getUint16(0, littleEndian))
                : width === 4
                  ? BigInt(view.getUint32(0, littleEndian))
                  : view.getBigUint64(0, littleEndian);
          expect(read).toBe(value);
        },
      ),
    );
  });

  it('refuses a value that does not fit its slot (GHC wrote a 2-byte varint into a 1-byte placeholder)', () => {
    const sink = new BufferSink();
    const slots = new SlotWriter(sink);
    const slot = slots.reserve(1);
    sink.write(new Uint8Array([0xaa, 0xbb]));
    // The bug of seed 001: the position grew to need two varint bytes.
    expect(encodeU32ToBytes(300).length).toBe(2);
    let caught: unknown;
    try {
      slots.patch(slot, 300);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ProfpackError);
    expect((caught as ProfpackError).code).toBe('ERR_SLOT_OVERFLOW');
    expect((caught as ProfpackError).offset).toBe(0);
    expect([...sink.bytes()]).toEqual([0, 0xaa, 0xbb]); // nothing was overwritten
    fc.assert(
      fc.property(fc.constantFrom<SlotWidth>(1, 2, 4), fc.bigInt({ min: 1n, max: 1n << 40n }), (width, extra) => {
        const s = new SlotWriter(new BufferSink()).reserve(width);
        expect(() => SlotWriter.encode(s, (1n << BigInt(width * 8)) - 1n + extra)).toThrow(ProfpackError);
        expect(() => SlotWriter.encode(s, -extra)).toThrow(ProfpackError);
      }),
    );
  });
});
