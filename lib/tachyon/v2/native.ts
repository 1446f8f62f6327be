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

export interface V2Native {
  decodeRegion(region: Uint8Array, base: number, startTimeUs: bigint, sampleIntervalUs: bigint): NativeDecodedRegion;
}

export const v2Native: V2Native | null = nativeModule<V2Native>('v2');
