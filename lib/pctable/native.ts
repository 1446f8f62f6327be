/** The addon's PcTable functions (native/pctable/pctable_napi.cc), or null under the JS twin. */
import { nativeModule } from '../backend';
import type { DecodedRuns, FromVarintResult } from './js';

/** Opaque C++-owned tables (a validated copy of the bytes). */
export type NativeTableHandle = { readonly __pctableTable: unique symbol };
export type NativeSetHandle = { readonly __pctableSet: unique symbol };

/** Same contract as the functions of the same names in js.ts. */
export interface PcTableNative {
  decodeVarint(bytes: Uint8Array, quantum: number): DecodedRuns;
  /** expectedSize 0: take the size from the table. */
  fromVarint(bytes: Uint8Array, quantum: number, expectedSize: number): FromVarintResult<NativeTableHandle>;
  fromLinear(bytes: Uint8Array, size: number, quantum: number): NativeTableHandle;
  /** -1, or the index of the first PC outside [0, size) when fillOutside is false. */
  lookupMany(
    handle: NativeTableHandle,
    pcs: Uint32Array,
    out: Int32Array,
    fillOutside: boolean,
    outsideValue: number,
  ): number;
  openSet(handles: NativeTableHandle[]): NativeSetHandle;
  /** -1, or the index of the first pair whose table index is bad or (without fillOutside) whose PC is outside. */
  setLookupMany(
    set: NativeSetHandle,
    tableIndex: Uint32Array,
    pcs: Uint32Array,
    out: Int32Array,
    fillOutside: boolean,
    outsideValue: number,
    useVarint: boolean,
  ): number;
}

export const pctableNative = nativeModule<PcTableNative>('pctable');
