/** Batch kinds, numbered as native/varint/varint_napi.cc numbers them. */
export enum VarintKind {
  U32 = 0,
  U64 = 1,
  Zigzag32 = 2,
  I64 = 3,
  I32 = 4,
  Zigzag64 = 5,
}

export type BatchArray = Uint32Array | Int32Array | BigUint64Array | BigInt64Array;

/** The typed array each kind decodes into, and its worst-case bytes per value. */
export const kindInfo: Record<
  VarintKind,
  { array: 'Uint32Array' | 'Int32Array' | 'BigUint64Array' | 'BigInt64Array'; maxBytes: number }
> = {
  [VarintKind.U32]: { array: 'Uint32Array', maxBytes: 5 },
  [VarintKind.U64]: { array: 'BigUint64Array', maxBytes: 10 },
  [VarintKind.Zigzag32]: { array: 'Int32Array', maxBytes: 5 },
  [VarintKind.I64]: { array: 'BigInt64Array', maxBytes: 10 },
  [VarintKind.I32]: { array: 'Int32Array', maxBytes: 5 },
  [VarintKind.Zigzag64]: { array: 'BigInt64Array', maxBytes: 10 },
};
