/**
 * The native twin of the version-2 region decoder (native/tachyon/v2), or
 * null under the JS backend. One N-API crossing per region.
 */
import { nativeModule } from '../../backend';
import type { ProfpackError } from '../../errors';

export interface NativeDecodedRegion {
  threadIds: BigUint64Array;
  interpreterIds: Uint32Array;
  sampleThread: Uint32Array;
  timestamps: BigUint64Array;
  statuses: Uint8Array;
  /** Sample i's stack is frames[stackOffsets[i] .. stackOffsets[i + 1]), innermost first. */
  stackOffsets: Uint32Array;
  frames: Uint32Array;
  /** Bad input: the samples above are those decoded before it. */
  error?: ProfpackError;
}

/** Opaque handle of a native block encoder (native/tachyon/v2/block_encoder.h). */
export type NativeEncoderHandle = { readonly __brand: 'v2-encoder' };

/** Opaque handle of a native region decoder kept across blocks (native/tachyon/v2/region_decoder.h). */
export type NativeDecoderHandle = { readonly __brand: 'v2-decoder' };

/** Opaque handle of a native heap-record decoder kept across chunks (native/tachyon/v2/heap_decoder.h). */
export type NativeHeapDecoderHandle = { readonly __brand: 'v2-heap-decoder' };

/** One chunk's whole records as columns (heap_decoder.h HeapRecords). */
export interface NativeHeapRecords {
  /** Per record: flags, thread index, end of its objects, end of its frees. */
  recordInts: Uint32Array;
  /** Per record: time, since, short-lived, external bytes, ArrayBuffer bytes. */
  recordNums: Float64Array;
  ordinals: Uint32Array;
  sizes: Uint32Array;
  allocTimesUs: Float64Array;
  /** Object i's stack is frames[stackOffsets[i] .. stackOffsets[i + 1]), innermost first. */
  stackOffsets: Uint32Array;
  frames: Uint32Array;
  freed: Uint32Array;
  /** Threads defined in this call. */
  threadIds: BigUint64Array;
  /** Over every call so far: records, allocations, frees, live, short-lived. */
  totals: Float64Array;
  /** Bad input: the records above are those decoded before it. */
  error?: ProfpackError;
}

export interface V2Native {
  /**
   * A model section's delta-zigzag value column (model.ts decodeDeltas' twin): n values and the bytes used, or the
   * error.
   */
  decodeValueColumn(
    column: Uint8Array,
    base: number,
    n: number,
  ): { values: Float64Array; used: number } | { error: ProfpackError };
  decodeRegion(region: Uint8Array, base: number, startTimeUs: bigint, sampleIntervalUs: bigint): NativeDecodedRegion;
  createDecoder(startTimeUs: bigint, sampleIntervalUs: bigint): NativeDecoderHandle;
  /**
   * Decodes whole blocks with the state of the blocks before; threadIds/interpreterIds hold only threads new in
   * this call.
   */
  decodeBlocks(handle: NativeDecoderHandle, blocks: Uint8Array, base: number): NativeDecodedRegion;
  /** Frees the decoder's state now (not at a later finalizer). */
  releaseDecoder(handle: NativeDecoderHandle): void;
  createEncoder(
    kind: number,
    sampleIntervalUs: bigint,
    startTimeUs: bigint,
    blockMaxSamples: number,
  ): NativeEncoderHandle;
  /** Codes a batch (sample k's stack = frames[stackEnds[k-1] .. stackEnds[k])); returns the blocks it finished. */
  encodeSamples(
    handle: NativeEncoderHandle,
    threadIds: BigUint64Array,
    interpreterIds: Uint32Array,
    timestamps: BigUint64Array,
    statuses: Uint8Array,
    stackEnds: Uint32Array,
    frames: Uint32Array,
  ): Uint8Array[];
  flushEncoder(handle: NativeEncoderHandle): Uint8Array;
  encoderCounts(handle: NativeEncoderHandle): [number, number];
  createHeapDecoder(
    startTimeUs: number,
    frameCount: number,
    maxLive: number,
    maxEvents: number,
  ): NativeHeapDecoderHandle;
  /** One chunk's records (raw or decompressed), error offsets from `base`; state kept for the next chunk. */
  decodeHeapRecords(handle: NativeHeapDecoderHandle, records: Uint8Array, base: number): NativeHeapRecords;
  releaseHeapDecoder(handle: NativeHeapDecoderHandle): void;
}

export const v2Native: V2Native | null = nativeModule<V2Native>('v2');
