/**
 * Memory reused across calls. The batch codecs' allocating forms stage their
 * worst-case output here and copy out only the exact result: a fresh
 * worst-case buffer per call is zeroed and faulted in page by page, which cost
 * more than the coding itself (bench/RESULTS.md). Every user is
 * synchronous and done with its view before it returns, so one buffer per
 * user suffices. Above `limitBytes` nothing is kept: one huge call must not
 * pin its memory for the life of the process.
 */
export class Scratch {
  private buffer = new ArrayBuffer(0);

  constructor(private readonly limitBytes: number) {}

  /** `byteLength` bytes of the kept buffer (stale contents), or null above the limit. */
  bytes(byteLength: number): Uint8Array | null {
    const buffer = this.take(byteLength);
    return buffer === null ? null : new Uint8Array(buffer, 0, byteLength);
  }

  /** `count` uint32 slots of the kept buffer (stale contents), or null above the limit. */
  words(count: number): Uint32Array | null {
    const buffer = this.take(4 * count);
    return buffer === null ? null : new Uint32Array(buffer, 0, count);
  }

  private take(byteLength: number): ArrayBuffer | null {
    if (byteLength > this.limitBytes) return null;
    if (this.buffer.byteLength < byteLength) {
      this.buffer = new ArrayBuffer(Math.min(this.limitBytes, Math.max(byteLength, 2 * this.buffer.byteLength)));
    }
    return this.buffer;
  }
}
