/**
 * The native sample encoder (native/tachyon/write/writer.h) behind the same
 * contract as the JS one. Samples are staged in a Uint32Array and cross
 * N-API once per batch; under compression the addon hands each 4 MiB of
 * records back to zstd-napi through a callback.
 */
import { nativeModule } from '../../../backend';
import {
  ThreadCursor,
  unknownFrameId,
  type EngineOptions,
  type SampleEngine,
  type StackRecord,
  type TickRecord,
} from './contract';
import { ZstdStream, type ZstdDirective } from '../../file/index';
import { ByteSink } from '../../../byte-sink';
import { grown } from '../../../typed-arrays';
import type { PatchableSink } from '../../../varint/index';

interface NativeProfileWriter {
  encode(words: Uint32Array, count: number): void;
  /** The tick's record words (TickRecord's layout) and its frame ids. */
  encodeTick(words: Uint32Array, ids: Uint32Array): void;
  finishSamples(): void;
  flushSamples(): void;
  write(bytes: Uint8Array): void;
  writeAt(offset: number, bytes: Uint8Array): void;
  flush(): void;
  position(): number;
  counters(): Float64Array;
  discard(): void;
  release(): void;
  pendingRepeats(): Uint8Array;
}

interface TachyonWriterModule {
  NativeProfileWriter: new (
    fd: number,
    startLo: number,
    startHi: number,
    compress?: (chunk: Uint8Array, directive: number) => Uint8Array,
  ) => NativeProfileWriter;
}

export const tachyonWriterNative = nativeModule<TachyonWriterModule>('tachyonWriter');

/** Words staged before one crossing (256 KiB); a sample takes 7 + depth words. */
const STAGING_WORDS = 64 * 1024;
/** The staging's first size (16 KiB): a short-lived writer does not leave 256 KiB of garbage behind. */
const FIRST_STAGING_WORDS = 4 * 1024;

/** A staged sample's depth word that stands for the thread's previous stack (writer.h SampleEncoder::kSameStack). */
const SAME_STACK = 0xffff_ffff;

/** A thread's last staged stack, while the staging still holds it: a repeat then crosses without its ids. */
class StagedThread {
  /** Where the stack's ids start in the staging, valid while `epoch` is the engine's. */
  at = 0;
  depth = 0;
  epoch = -1;
}

export class NativeSampleEngine implements SampleEngine {
  readonly checksIds = true;
  readonly output: PatchableSink & { flush(): void };
  private readonly handle: NativeProfileWriter;
  private staging = new Uint32Array(FIRST_STAGING_WORDS);
  private staged = 0;
  /** Counts the staging's reuses (drain, discard): a StagedThread of an older epoch points at overwritten words. */
  private epoch = 0;
  private readonly stagedThreads = new ThreadCursor(() => new StagedThread());
  private readonly stream: ZstdStream | null = null;

  constructor(options: EngineOptions) {
    if (tachyonWriterNative === null) throw new Error('the native addon has no tachyonWriter module');
    let compress: ((chunk: Uint8Array, directive: number) => Uint8Array) | undefined;
    if (options.compression === 'zstd') {
      const stream = new ZstdStream(options.level);
      this.stream = stream;
      const collected = new ByteSink(1 << 16);
      const collector: PatchableSink = {
        get position() {
          return collected.length;
        },
        write: (bytes) => collected.append(bytes),
        writeAt: () => {
          throw new Error('unreachable');
        },
      };
      // The addon's directives, in ZSTD_EndDirective order (native/tachyon/write/writer.h ZstdDirective).
      const directives: readonly ZstdDirective[] = ['continue', 'flush', 'end'];
      compress = (chunk, directive) => {
        collected.clear();
        stream.compress(chunk, directives[directive]!, collector);
        return collected.view();
      };
    }
    const handle = new tachyonWriterNative.NativeProfileWriter(
      options.fd,
      options.startTimeLo,
      options.startTimeHi,
      compress,
    );
    this.handle = handle;
    const self = this;
    this.output = {
      get position() {
        self.drain();
        return handle.position();
      },
      write(bytes) {
        self.drain();
        handle.write(bytes);
      },
      writeAt(offset, bytes) {
        self.drain();
        handle.writeAt(offset, bytes);
      },
      flush() {
        self.drain();
        handle.flush();
      },
    };
  }

  writeStack(s: StackRecord): void {
    const depth = s.depth;
    const t = this.stagedThreads.find(s.tidHi, s.tidLo, s.interpreterId);
    if (t.epoch === this.epoch && t.depth === depth && this.sameAsStaged(s, t.at)) {
      // The addon's previous stack for this thread is these ids, checked when they were staged.
      this.room(7);
      this.stageHeader(s, SAME_STACK);
      this.staged += 7;
      return;
    }
    this.room(7 + depth);
    const w = this.staging;
    let i = this.stageHeader(s, depth);
    // A loop, not set(subarray): a view per stack was most of writeSample's garbage. The ids are
    // checked in the same loop (checksIds); a refused stack is not staged.
    const frames = s.frames;
    const limit = s.idLimit;
    let bad = false;
    if (frames instanceof Uint32Array) {
      for (let k = s.start, end = k + depth; k < end; k++) {
        const id = frames[k]!;
        w[i++] = id;
        bad ||= id >= limit;
      }
    } else {
      for (let k = s.start, end = k + depth; k < end; k++) {
        const id = frames[k]!;
        w[i++] = id;
        bad ||= !(id < limit && id >= 0 && Number.isInteger(id));
      }
    }
    if (bad) throw unknownFrameId(frames, this.firstBad(s), limit);
    t.at = this.staged + 7;
    t.depth = depth;
    t.epoch = this.epoch;
    this.staged = i;
  }

  /** The staged sample header at the staging's end (STAGED_HEADER's layout); returns where its ids go. */
  private stageHeader(s: StackRecord, depth: number): number {
    const w = this.staging;
    const i = this.staged;
    w[i] = s.tidLo;
    w[i + 1] = s.tidHi;
    w[i + 2] = s.interpreterId;
    w[i + 3] = s.tsLo;
    w[i + 4] = s.tsHi;
    w[i + 5] = s.status;
    w[i + 6] = depth;
    return i + 7;
  }

  /** Whether s's ids equal the staged ids at `at` (as many as s.depth), innermost first: a change shows at once. */
  private sameAsStaged(s: StackRecord, at: number): boolean {
    const w = this.staging;
    const frames = s.frames;
    const start = s.start;
    const depth = s.depth;
    // Two loops, so each reads one kind of array (writeStack's callers mostly pass a Uint32Array).
    if (frames instanceof Uint32Array) {
      for (let k = 0; k < depth; k++) if (frames[start + k] !== w[at + k]) return false;
    } else {
      for (let k = 0; k < depth; k++) if (frames[start + k] !== w[at + k]) return false;
    }
    return true;
  }

  /** The index (from s.start) of the first id writeStack refused. */
  private firstBad(s: StackRecord): number {
    const { frames, start, depth, idLimit } = s;
    for (let k = 0; k < depth; k++) {
      const id = frames[start + k]!;
      if (!(id < idLimit && id >= 0 && Number.isInteger(id))) return k;
    }
    return -1;
  }

  writeTick(tick: TickRecord): void {
    this.drain();
    this.handle.encodeTick(tick.words, tick.ids);
  }

  writeBatch(words: Uint32Array, count: number): void {
    // One crossing per sample with the caller's words as they are: copying them into the staging
    // would need a subarray for set(), garbage on every sample.
    this.drain();
    this.handle.encode(words, count);
  }

  /** Room for `need` more staged words (at most STAGING_WORDS): the staging doubles up to its cap, then drains. */
  private room(need: number): void {
    if (this.staged + need > STAGING_WORDS) this.drain();
    if (this.staged + need > this.staging.length) this.staging = grown(this.staging, this.staged + need - 1);
  }

  /** Encodes what is staged (one crossing). A failure drops the batch: the writer is broken then. */
  private drain(): void {
    if (this.staged === 0) return;
    const count = this.staged;
    this.staged = 0;
    this.epoch++;
    this.handle.encode(this.staging, count);
  }

  finishSamples(): void {
    this.drain();
    this.handle.finishSamples();
  }

  flushSamples(): void {
    this.drain();
    this.handle.flushSamples();
  }

  counters(): Float64Array {
    this.drain();
    return this.handle.counters();
  }

  discard(): void {
    this.staged = 0;
    this.epoch++;
    this.handle.discard();
  }

  pendingRepeats(): Uint8Array {
    this.drain();
    return this.handle.pendingRepeats();
  }

  release(): void {
    this.staged = 0;
    this.epoch++;
    this.stagedThreads.clear();
    this.stream?.release();
    this.handle.release();
  }
}
