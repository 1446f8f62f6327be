/** The addon's batch LEB128 functions (native/varint/varint_napi.cc), or null under the JS twin. */
import { nativeModule } from '../backend';
import type { BatchArray, VarintKind } from './kinds';

export interface VarintNative {
  decodeMany(kind: VarintKind, bytes: Uint8Array, offset: number, count: number, out: BatchArray): number;
  encodeMany(kind: VarintKind, values: BatchArray, out: Uint8Array, offset: number): number;
}

export const varintNative = nativeModule<VarintNative>('varint');
