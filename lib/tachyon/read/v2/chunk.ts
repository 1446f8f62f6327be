/**
 * A version-2 region's samples as the readers hand them on: one block at a
 * time in typed columns (V2SampleChunk), built by ChunkBuilder. Apart from
 * file.ts, which finds and checks the region, so each stays under the cap.
 */

/**
 * Decoded samples, in file order: one block at a time on both backends
 * (at most BLOCK_MAX_SAMPLES samples).
 */
export interface V2SampleChunk {
  count: number;
  /** Index (first-seen order) of each sample's thread in threadIds / interpreterIds. */
  sampleThread: ArrayLike<number>;
  timestamps: ArrayLike<bigint>;
  statuses: ArrayLike<number>;
  /** Sample i's stack is frames[stackOffsets[i] .. stackOffsets[i + 1]), innermost first. */
  stackOffsets: ArrayLike<number>;
  frames: ArrayLike<number>;
  /** Every thread defined so far. */
  threadIds: readonly bigint[];
  interpreterIds: ArrayLike<number>;
}

/** One block's samples in typed columns (the frames column grows as stacks come). */
export class ChunkBuilder {
  count = 0;
  private sampleThread = new Uint32Array(256);
  private timestamps = new BigUint64Array(256);
  private statuses = new Uint8Array(256);
  private stackOffsets = new Uint32Array(257);
  private frames = new Uint32Array(4096);
  private framesUsed = 0;

  constructor(
    private readonly threadIds: readonly bigint[],
    private readonly interpreterIds: ArrayLike<number>,
  ) {}

  add(t: number, timestampUs: bigint, status: number, stack: Uint32Array, depth: number): void {
    const i = this.count;
    if (i === this.sampleThread.length) {
      this.sampleThread = grow(this.sampleThread, i * 2);
      this.timestamps = grow(this.timestamps, i * 2);
      this.statuses = grow(this.statuses, i * 2);
      this.stackOffsets = grow(this.stackOffsets, i * 2 + 1);
    }
    if (this.framesUsed + depth > this.frames.length)
      this.frames = grow(this.frames, Math.max(this.frames.length * 2, this.framesUsed + depth));
    this.sampleThread[i] = t;
    this.timestamps[i] = timestampUs;
    this.statuses[i] = status;
    this.frames.set(stack.subarray(0, depth), this.framesUsed);
    this.framesUsed += depth;
    this.stackOffsets[i + 1] = this.framesUsed;
    this.count++;
  }

  done(): V2SampleChunk {
    const n = this.count;
    return {
      count: n,
      sampleThread: this.sampleThread.subarray(0, n),
      timestamps: this.timestamps.subarray(0, n),
      statuses: this.statuses.subarray(0, n),
      stackOffsets: this.stackOffsets.subarray(0, n + 1),
      frames: this.frames.subarray(0, this.framesUsed),
      threadIds: this.threadIds,
      interpreterIds: this.interpreterIds,
    };
  }
}

function grow<T extends Uint32Array | Uint8Array | BigUint64Array>(array: T, length: number): T {
  const out = new (array.constructor as new (n: number) => T)(length);
  out.set(array as never);
  return out;
}
