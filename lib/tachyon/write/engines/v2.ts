/**
 * ProfileWriter's sample engines for format version 2 (`formatVersion: 2`):
 * samples go into sample blocks (codec/blocks.ts, docs/format-v2.md §3) instead of
 * version 1's records, and the region is one zstd frame when compression is
 * on. ProfileWriter keeps its policy (argument checks, tables, header, stats,
 * footer, states); only the header's version and flags and the table coding
 * differ (writer.ts finalize).
 *
 * Two twins behind the SampleEngine contract: the JS block writer, and the
 * native block encoder (native/tachyon/v2/block_encoder.h) fed in batches,
 * one N-API crossing per batch. Both produce byte-identical blocks
 * (test/tachyon/codec/backends.test.ts).
 */
import { ErrorCode, ProfpackError } from '../../../errors';
import { TWO_POW_32 } from '../../../varint/index';
import {
  COUNTER_COUNT,
  Counter,
  writeBatchAsStacks,
  writeTickAsStacks,
  type EngineOptions,
  type SampleEngine,
  StackRecord,
  type TickRecord,
} from './contract';
import { FileOutput, ZstdStream } from '../../file/index';
import { SampleBlockWriter, blockKindOf, type StackCoding } from '../../codec/index';
import { BLOCK_MAX_SAMPLES, V2_MAX_STACK_DEPTH } from '../../codec/index';
import { v2Native, type NativeEncoderHandle } from '../../codec/index';

const SAFE_HIGH = 0x20_0000; // hi < 2^21: hi × 2^32 + lo stays below 2^53

/** Samples and frames staged before one crossing into the native encoder. */
const STAGED_SAMPLES = 4096;
const STAGED_FRAMES = 64 * 1024;

/** What both twins share: the file, the optional zstd frame, the tick loop and the counters. */
abstract class BlockEngine implements SampleEngine {
  readonly output: FileOutput;
  private readonly zstd: ZstdStream | null;
  protected readonly counts = new Float64Array(COUNTER_COUNT);
  /** Block bytes before compression (CPython's bytes_written counts records the same way). */
  protected blockBytes = 0;
  /** writeTick's and writeBatch's stacks, one at a time. */
  private readonly record = new StackRecord();

  constructor(options: EngineOptions) {
    if (!options.littleEndian) {
      throw new ProfpackError('format version 2 is little-endian only', {
        code: ErrorCode.V2_UNSUPPORTED,
        expected: 'a little-endian host',
      });
    }
    this.output = new FileOutput(options.fd, options.memory ?? null);
    this.zstd = options.compression === 'zstd' ? new ZstdStream(options.level) : null;
  }

  protected emit(block: Uint8Array): void {
    if (block.length === 0) return;
    this.blockBytes += block.length;
    if (this.zstd !== null) this.zstd.compress(block, 'continue', this.output);
    else this.output.write(block);
  }

  abstract writeStack(s: StackRecord): void;

  writeTick(tick: TickRecord): void {
    writeTickAsStacks(this, tick, this.record, V2_MAX_STACK_DEPTH);
  }

  writeBatch(words: Uint32Array, count: number): void {
    writeBatchAsStacks(this, words, count, this.record);
  }

  /** The last block, then the end of the zstd frame. */
  protected endRegion(): void {
    if (this.zstd !== null) this.zstd.compress(new Uint8Array(0), 'end', this.output);
  }

  /**
   * ProfileWriter.flush(): the block being filled is sealed and every block
   * reaches the OS (a zstd flush, so the bytes on disk decompress to exactly
   * those blocks): what the journal names is then all on disk. Both twins seal
   * at the same sample, so their files stay byte-identical.
   */
  flushSamples(): void {
    this.sealBlock();
    if (this.zstd !== null) this.zstd.compress(new Uint8Array(0), 'flush', this.output);
    this.output.flush();
  }

  /** Finished blocks and the one being filled go out. */
  protected abstract sealBlock(): void;
  abstract finishSamples(): void;
  abstract counters(): Float64Array;

  discard(): void {
    // Bytes still buffered never reach the file; what did stays (a zero header in front).
    this.output.len = 0;
  }

  release(): void {
    this.zstd?.release();
  }
}

/** The JS twin: codec/blocks.ts's SampleBlockWriter. */
class JsBlockEngine extends BlockEngine {
  private readonly blocks: SampleBlockWriter;
  private readonly scratch = new Uint32Array(V2_MAX_STACK_DEPTH);

  constructor(options: EngineOptions, stackCoding: StackCoding, sampleIntervalUs: bigint) {
    super(options);
    const startTimeUs = (BigInt(options.startTimeHi) << 32n) | BigInt(options.startTimeLo);
    this.blocks = new SampleBlockWriter(
      stackCoding,
      { sampleIntervalUs, startTimeUs },
      (block) => this.emit(block),
      options.blockMaxSamples ?? BLOCK_MAX_SAMPLES,
    );
  }

  writeStack(s: StackRecord): void {
    const { tidHi, tidLo, tsHi, tsLo, frames, start, depth } = s;
    const threadId = tidHi === 0 ? BigInt(tidLo) : (BigInt(tidHi) << 32n) | BigInt(tidLo);
    const timestampUs = tsHi < SAFE_HIGH ? tsHi * TWO_POW_32 + tsLo : (BigInt(tsHi) << 32n) | BigInt(tsLo);
    let stack: ArrayLike<number>;
    if (frames instanceof Uint32Array) {
      stack = frames.subarray(start, start + depth);
    } else {
      for (let i = 0; i < depth; i++) this.scratch[i] = frames[start + i]!;
      stack = this.scratch.subarray(0, depth);
    }
    this.blocks.add(threadId, s.interpreterId, timestampUs, s.status, stack);
  }

  protected sealBlock(): void {
    this.blocks.flush();
  }

  finishSamples(): void {
    this.sealBlock();
    this.endRegion();
  }

  counters(): Float64Array {
    const c = this.counts;
    c[Counter.totalSamples] = this.blocks.sampleCount;
    c[Counter.threadCount] = this.blocks.threadCount;
    c[Counter.bytesWritten] = this.blockBytes;
    return c;
  }
}

/**
 * The native twin: samples are staged in typed arrays (64-bit values written
 * as u32 halves through little-endian views, so no bigint per sample) and
 * coded by the C++ block encoder one batch per crossing.
 */
class NativeBlockEngine extends BlockEngine {
  private readonly handle: NativeEncoderHandle;
  private readonly threadIds = new BigUint64Array(STAGED_SAMPLES);
  private readonly threadWords = new Uint32Array(this.threadIds.buffer);
  private readonly timestamps = new BigUint64Array(STAGED_SAMPLES);
  private readonly timestampWords = new Uint32Array(this.timestamps.buffer);
  private readonly interpreterIds = new Uint32Array(STAGED_SAMPLES);
  private readonly statuses = new Uint8Array(STAGED_SAMPLES);
  private readonly stackEnds = new Uint32Array(STAGED_SAMPLES);
  private readonly frames = new Uint32Array(STAGED_FRAMES);
  private staged = 0;
  private stagedFrames = 0;

  constructor(options: EngineOptions, stackCoding: StackCoding, sampleIntervalUs: bigint) {
    super(options);
    if (v2Native === null)
      throw new ProfpackError('the native addon has no version-2 encoder', { code: ErrorCode.NATIVE_UNAVAILABLE });
    const startTimeUs = (BigInt(options.startTimeHi) << 32n) | BigInt(options.startTimeLo);
    this.handle = v2Native.createEncoder(
      blockKindOf(stackCoding),
      sampleIntervalUs,
      startTimeUs,
      options.blockMaxSamples ?? BLOCK_MAX_SAMPLES,
    );
  }

  writeStack(s: StackRecord): void {
    const { frames, start, depth } = s;
    if (this.staged === STAGED_SAMPLES || this.stagedFrames + depth > STAGED_FRAMES) this.drain();
    const k = this.staged;
    this.threadWords[2 * k] = s.tidLo;
    this.threadWords[2 * k + 1] = s.tidHi;
    this.timestampWords[2 * k] = s.tsLo;
    this.timestampWords[2 * k + 1] = s.tsHi;
    this.interpreterIds[k] = s.interpreterId;
    this.statuses[k] = s.status;
    if (frames instanceof Uint32Array) this.frames.set(frames.subarray(start, start + depth), this.stagedFrames);
    else for (let i = 0; i < depth; i++) this.frames[this.stagedFrames + i] = frames[start + i]!;
    this.stagedFrames += depth;
    this.stackEnds[k] = this.stagedFrames;
    this.staged = k + 1;
  }

  /** Codes what is staged; finished blocks go to the file (or the zstd frame). */
  private drain(): void {
    if (this.staged === 0) return;
    const n = this.staged;
    this.staged = 0;
    this.stagedFrames = 0;
    const blocks = v2Native!.encodeSamples(
      this.handle,
      this.threadIds.subarray(0, n),
      this.interpreterIds.subarray(0, n),
      this.timestamps.subarray(0, n),
      this.statuses.subarray(0, n),
      this.stackEnds.subarray(0, n),
      this.frames,
    );
    for (const block of blocks) this.emit(block);
  }

  protected sealBlock(): void {
    this.drain();
    this.emit(v2Native!.flushEncoder(this.handle));
  }

  finishSamples(): void {
    this.sealBlock();
    this.endRegion();
  }

  counters(): Float64Array {
    this.drain();
    const [samples, threads] = v2Native!.encoderCounts(this.handle);
    const c = this.counts;
    c[Counter.totalSamples] = samples;
    c[Counter.threadCount] = threads;
    c[Counter.bytesWritten] = this.blockBytes;
    return c;
  }

  override discard(): void {
    this.staged = 0;
    this.stagedFrames = 0;
    super.discard();
  }
}

/** The version-2 engine of ProfileWriter's backend. */
export function createV2Engine(
  which: 'native' | 'js',
  options: EngineOptions,
  stackCoding: StackCoding,
  sampleIntervalUs: bigint,
): SampleEngine {
  return which === 'native'
    ? new NativeBlockEngine(options, stackCoding, sampleIntervalUs)
    : new JsBlockEngine(options, stackCoding, sampleIntervalUs);
}
