/**
 * LEB128 written the plain, slow way (BigInt, one group at a time): the reference the varint codecs are checked
 * against, and the bytes tests craft by hand.
 */

/** Unsigned LEB128 of a non-negative value: 7 bits a byte, low groups first, 0x80 on all but the last. */
export function uleb128(value: bigint | number): number[] {
  let v = BigInt(value);
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return out;
}

/** Signed LEB128 (two's complement): ends at the first group whose bit 6 matches the sign of what is left. */
export function sleb128(value: bigint): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = Number(BigInt.asUintN(7, value));
    value >>= 7n;
    const sign = (byte & 0x40) !== 0;
    const done = (value === 0n && !sign) || (value === -1n && sign);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}
