/// <reference lib="esnext.disposable" />
/**
 * ProfileWriter: streams samples to a Tachyon file exactly as CPython
 * 3.15.2's `_remote_debugging.BinaryWriter` does, byte for byte
 * (../shared/notes/tachyon-format.md §2-9). This class holds the policy:
 * argument checks, the string and frame tables, the header (64 zero bytes
 * patched at finalize through fixed-width slots, seed 001's lesson), the
 * open / broken / finalized / closed state. The per-sample encoding runs in
 * the native addon or its JS twin; a sample's shape checks are in
 * sample-checks.ts, the tables, sections, stats block, footer and header
 * patch written at finalize in trailer.ts.
 */
import { canWriteZstd, defaultCompression, noZstdReason } from '../file/index';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { backend, nativeModule } from '../../backend';
import { removeFile } from '../../file-retry';
import { ErrorCode, ProfpackError, isProfpackError } from '../../errors';
import { SlotWriter } from '../../varint/index';
import { FORMAT_VERSION_2, HEADER_SIZE, MAX_STACK_DEPTH, ZSTD_LEVEL } from '../format';
import { ioError, reserveHeader, type HeaderSlots, type StatsValues } from '../file/index';
import { StackHalves, configWord, formatOptions, invalid, statusByte, u32Value, u64Halves } from './arguments';
import { COUNTER_COUNT, deepStacks, writerStats, type EngineOptions, type SampleEngine } from './engines/index';
import { StackRecord, TickRecord } from './engines/index';
import { JsSampleEngine } from './engines/index';
import { NativeSampleEngine } from './engines/index';
import { createV2Engine } from './engines/index';
import { Keeper, type WriterLock, abandoned, checkKeeperOptions, openLocked } from './lifetime';
import { StackInterner } from './stack-interner';
import { createHeapSink, type HeapFileSink, type HeapSinkOptions } from './heap-sink';
import { WriterFrameTable, WriterStringTable, toInt32Field, toOpcode } from './tables';
import type { FrameSpec, SampleInterpreterInfo, ProfileWriterOptions, StackTick, WriterState } from './types';
import type { WriterStats } from './types';
import { checkFrameIds, SampleStaging, stageSampleHeaders, stageTick } from './sample-checks';
import { WRITER_INTERNALS, checkedStats, writeTrailer, type WriterInternals } from './trailer';
import { V2_MAX_STACK_DEPTH } from '../codec/index';

export class ProfileWriter implements Disposable, AsyncDisposable {
  readonly path: string;
  /** The encoder in use: 'native' or 'js'. */
  readonly backend: 'native' | 'js';
  private readonly fd: number;
  private readonly engine: SampleEngine;
  private readonly slots: SlotWriter;
  private readonly header: HeaderSlots;
  private readonly littleEndian: boolean;
  private readonly compression: 'zstd' | 'none';
  private readonly strings = new WriterStringTable();
  private readonly frames = new WriterFrameTable();
  private readonly startTime: bigint;
  private readonly interval: bigint;
  private readonly config: number;
  private statsValues: StatsValues | undefined;
  private stateValue: WriterState = 'open';
  private brokenBy: unknown;
  private finalCounters: Float64Array | undefined;
  /** One writeSample's threads, staged (STAGED_HEADER words, then its frame ids). */
  private readonly sampleStaging = new SampleStaging();
  private readonly halves = new Uint32Array(4);
  /** The engines' per-call records, reused (no allocation per call). */
  private readonly stack = new StackRecord();
  private readonly stackHalves = new StackHalves();
  private tick = new TickRecord(64);
  private readonly interner: StackInterner;
  private readonly internals: WriterInternals;
  /** The header's format version: 1 (CPython's) or 2 (docs/format-v2.md). */
  readonly formatVersion: 1 | 2;
  private keeper: Keeper | null = null;
  /** Frames a stack keeps: MAX_STACK_DEPTH (CPython's) in version 1, V2_MAX_STACK_DEPTH in version 2. */
  private readonly maxStackDepth: number;
  /** Stacks cut to maxStackDepth (stats.stacksCut); the path's lock, taken before the open. */
  private stacksCut = 0;
  private lock: WriterLock | null = null;
  private heap: HeapFileSink | null = null;

  constructor(path: string, options: ProfileWriterOptions) {
    if (typeof path !== 'string' || path === '') throw invalid('path must be a non-empty string', 'a file path');
    if (options === null || typeof options !== 'object')
      throw invalid('options are required', '{ sampleIntervalUs, ... }');
    const h = this.halves;
    u64Halves(options.sampleIntervalUs, 'sampleIntervalUs', h, 0);
    this.interval = (BigInt(h[0]!) << 32n) | BigInt(h[1]!);
    u64Halves(options.startTimeUs ?? 0, 'startTimeUs', h, 0);
    this.startTime = (BigInt(h[0]!) << 32n) | BigInt(h[1]!);
    const startHi = h[0]!;
    const startLo = h[1]!;

    const compression = options.compression ?? defaultCompression();
    if (compression !== 'zstd' && compression !== 'none')
      throw invalid(`compression must be 'zstd' or 'none', not ${String(compression)}`, "'zstd' | 'none'");
    // Refused before the open: no empty file is left, no existing one truncated.
    if (compression === 'zstd' && !canWriteZstd()) {
      throw new ProfpackError(`${noZstdReason()}: write with compression: 'none'`, {
        code: ErrorCode.NATIVE_UNAVAILABLE,
        expected: 'zstd-napi, or Node >= 22.15',
      });
    }
    this.compression = compression;
    const level = options.level ?? ZSTD_LEVEL;
    if (!Number.isInteger(level) || level < -131072 || level > 22)
      throw invalid(`level must be a zstd level, got ${String(level)}`, 'an integer zstd level (5 by default)');
    this.config = configWord(options.mode, options.captureFeatures);
    const { formatVersion, stackCoding } = formatOptions(options);
    this.formatVersion = formatVersion;
    this.maxStackDepth = formatVersion === 2 ? V2_MAX_STACK_DEPTH : MAX_STACK_DEPTH;
    this.interner = new StackInterner(this.strings, this.frames, options.immutableFrames === true, this.maxStackDepth);
    checkKeeperOptions(options);

    const which = options.backend ?? backend.name;
    if (which !== 'native' && which !== 'js')
      throw invalid(`backend must be 'native' or 'js', not ${String(which)}`, "'native' | 'js'");
    // The addon's module asked here, not through engines/native.ts: a version-2 writer never loads that file.
    if (which === 'native' && nativeModule('tachyonWriter') === null) {
      throw new ProfpackError('the native writer was requested but the addon is not loaded', {
        code: ErrorCode.NATIVE_UNAVAILABLE,
      });
    }
    this.backend = which;
    this.path = path;
    this.littleEndian = os.endianness() === 'LE';
    const internals = (options as { [WRITER_INTERNALS]?: WriterInternals })[WRITER_INTERNALS] ?? {};
    this.internals = internals;
    const memory = internals.memory;
    if (memory !== undefined && formatVersion === 1 && which === 'native')
      throw invalid('an in-memory version-1 writer needs the JS encoder', "backend: 'js'");

    [this.fd, this.lock] = memory === undefined ? openLocked(this, path) : [-1, null];
    const engineOptions: EngineOptions = {
      fd: this.fd,
      memory,
      blockMaxSamples: internals.blockMaxSamples,
      compression,
      level,
      littleEndian: this.littleEndian,
      startTimeHi: startHi,
      startTimeLo: startLo,
    };
    try {
      if (formatVersion === 2) this.engine = createV2Engine(which, engineOptions, stackCoding, this.interval);
      else this.engine = which === 'native' ? new NativeSampleEngine(engineOptions) : new JsSampleEngine(engineOptions);
    } catch (err) {
      this.removeNewFile(path);
      throw err;
    }
    // 64 zero bytes, patched at finalize: every field a fixed-width slot.
    this.slots = new SlotWriter(this.engine.output, { littleEndian: this.littleEndian });
    try {
      this.header = reserveHeader(this.slots);
      // from the start: recover() refuses it by name
      if (formatVersion === 2) this.slots.patch(this.header.version, FORMAT_VERSION_2);
      // On disk now (one write(), as CPython's writer does): a writer killed
      // before its first 512 KiB flush leaves a file readers call "not finalized".
      this.engine.output.flush();
    } catch (err) {
      this.engine.discard();
      this.engine.release();
      this.removeNewFile(path);
      throw ioError(err, 'writing the header');
    }
    if (this.fd >= 0) abandoned.register(this, this.fd, this);
    // A model section (converters, finalized in one go) is not journaled: such a file is not recoverable.
    this.keeper = new Keeper(this, path, options, this.fd >= 0 && internals.modelSection === undefined, {
      formatVersion,
      compression,
      littleEndian: this.littleEndian,
      profilingConfig: this.config,
      startTimeUs: this.startTime,
      sampleIntervalUs: this.interval,
    });
  }

  /**
   * The constructor failed (its header write, on a full disk): a regular file it just created or truncated is not left
   * behind empty. Removed before the lock goes: another writer may take the path right after.
   */
  private removeNewFile(path: string): void {
    const regular = this.fd >= 0 && fs.fstatSync(this.fd).isFile();
    if (this.fd >= 0) fs.closeSync(this.fd);
    if (regular) removeFile(path);
    this.lock?.release();
  }

  private closeFd(): void {
    this.lock?.release();
    if (this.fd >= 0) fs.closeSync(this.fd);
  }

  get state(): WriterState {
    return this.stateValue;
  }

  /** Distinct strings and frames interned so far. */
  get stringCount(): number {
    return this.strings.count;
  }
  get frameCount(): number {
    return this.frames.count;
  }

  private checkOpen(): void {
    if (this.stateValue === 'open') return;
    if (this.stateValue === 'broken') {
      throw new ProfpackError('the writer is broken by an earlier write error; only close() is possible', {
        code: ErrorCode.TACHYON_WRITE_BROKEN,
        cause: this.brokenBy,
      });
    }
    throw new ProfpackError(`the writer is ${this.stateValue}`, { code: ErrorCode.TACHYON_WRITE_CLOSED });
  }

  /** Any failure past validation leaves the writer broken (CPython: "Writer is broken"). */
  private breakWith(err: unknown, what: string): ProfpackError {
    const error = isProfpackError(err) && err.code === ErrorCode.TACHYON_WRITE_IO ? err : ioError(err, what);
    this.stateValue = 'broken';
    this.brokenBy = error;
    this.keeper?.stop();
    return error;
  }

  /** The id of `value` in the string table (filenames and function names share it). */
  internString(value: string): number {
    this.checkOpen();
    return this.strings.intern(value);
  }

  /** The id of a frame (deduplicated on all 7 fields, converted as CPython converts them). */
  internFrame(frame: FrameSpec): number {
    this.checkOpen();
    if (frame === null || typeof frame !== 'object')
      throw invalid('internFrame expects a frame object', '{ filename, funcname, lineno?, ... }');
    const mark = this.strings.mark();
    try {
      const file = this.stringRef(frame.filename, 'filename');
      const func = this.stringRef(frame.funcname, 'funcname');
      return this.frames.intern(
        file,
        func,
        toInt32Field(frame.lineno),
        toInt32Field(frame.endLineno),
        toInt32Field(frame.column),
        toInt32Field(frame.endColumn),
        toOpcode(frame.opcode),
      );
    } catch (err) {
      this.strings.rollback(mark);
      throw err;
    }
  }

  private stringRef(value: string | number, what: string): number {
    if (typeof value === 'number') {
      if (!this.strings.has(value)) {
        throw new ProfpackError(`${what} id ${value} was not returned by internString`, {
          code: ErrorCode.TACHYON_WRITE_UNKNOWN_ID,
          expected: `an integer in [0, ${this.strings.count})`,
        });
      }
      return value;
    }
    return this.strings.intern(value);
  }

  /**
   * One sample in CPython's shape: interpreters -> threads -> frames
   * (innermost first), all at `timestampUs`. Every thread is checked and
   * every frame interned before any record is encoded, so a refused sample
   * leaves no bytes behind. At most 256 frames per thread are kept (the
   * outermost are dropped, as CPython 3.15.2 does; version 2 keeps 4,096).
   */
  writeSample(interpreters: readonly SampleInterpreterInfo[], timestampUs: number | bigint): void {
    this.checkOpen();
    if (!Array.isArray(interpreters)) throw invalid('interpreters must be an array', 'SampleInterpreterInfo[]');
    const h = this.halves;
    u64Halves(timestampUs, 'timestampUs', h, 2);
    const tsHi = h[2]!;
    const tsLo = h[3]!;
    // Pass 1: ids and shapes, so nothing is interned for a sample refused on them; the thread headers are staged.
    const staging = this.sampleStaging;
    stageSampleHeaders(interpreters, staging, h, this.maxStackDepth, tsHi, tsLo);
    const words = staging.count;
    if (words === 0) return; // no threads: CPython writes and counts nothing (§5.5)
    const w = staging.words;
    // Pass 2: intern every kept frame of every thread after its header (undone if one is refused).
    this.interner.internAll(staging);
    // Pass 3: encode.
    try {
      this.engine.writeBatch(w, words);
    } catch (err) {
      throw this.breakWith(err, 'encoding a sample');
    }
    this.stacksCut += staging.cut;
  }

  /**
   * The fast path: one thread's stack as frame ids from internFrame,
   * innermost first (a Uint32Array is copied without conversion). Deeper
   * than 256 (version 2: 4,096): the outermost frames are dropped.
   */
  writeStack(
    threadId: number | bigint,
    interpreterId: number | bigint,
    timestampUs: number | bigint,
    status: number | bigint,
    frameIds: Uint32Array | readonly number[],
  ): void {
    this.checkOpen();
    const s = this.stack;
    this.stackHalves.fill(threadId, timestampUs, s);
    const interp = u32Value(interpreterId, 'interpreterId');
    const st = statusByte(status);
    if (!(frameIds instanceof Uint32Array) && !Array.isArray(frameIds))
      throw invalid('frameIds must be a Uint32Array or an array', 'Uint32Array of frame ids');
    const depth = Math.min(frameIds.length, this.maxStackDepth);
    if (this.engine.checksIds !== true) checkFrameIds(frameIds, depth, this.frames.count);
    s.interpreterId = interp;
    s.status = st;
    s.frames = frameIds;
    s.start = 0;
    s.depth = depth;
    s.idLimit = this.frames.count;
    try {
      this.engine.writeStack(s);
    } catch (err) {
      // A refused id (an engine that checksIds) leaves the writer open, as the check before did.
      if (isProfpackError(err) && err.code === ErrorCode.TACHYON_WRITE_UNKNOWN_ID) throw err;
      throw this.breakWith(err, 'encoding a sample');
    }
    if (frameIds.length > this.maxStackDepth) this.stacksCut++;
  }

  /**
   * The fast path for a whole sampling tick: every thread at `timestampUs` in
   * one call (one N-API crossing on the native backend). Same encoding as
   * writeStack per thread, in array order. Everything is checked before any
   * thread is encoded.
   */
  writeStacks(timestampUs: number | bigint, tick: StackTick): void {
    this.checkOpen();
    const h = this.halves;
    u64Halves(timestampUs, 'timestampUs', h, 2);
    const record = (this.tick = stageTick(tick, this.tick, h));
    record.stamp(h[2]!, h[3]!, this.frames.count);
    try {
      // The encoders check the ends and the kept frame ids of the whole tick before encoding any of it.
      this.engine.writeTick(record);
    } catch (err) {
      if (
        isProfpackError(err) &&
        (err.code === ErrorCode.TACHYON_WRITE_UNKNOWN_ID || err.code === ErrorCode.INVALID_ARGUMENT)
      )
        throw err;
      throw this.breakWith(err, 'encoding a sample');
    }
    this.stacksCut += deepStacks(record.count, record.ends, this.maxStackDepth);
  }

  /**
   * Hands every sample record encoded so far to the OS (one write(), no fsync); returns the
   * file's byte count. zstd compresses with ZSTD_e_flush: the unterminated frame on disk
   * decompresses to all of them (compressed bytes then differ from CPython's; the region does
   * not). Not included: each thread's pending REPEAT run (held back until its stack changes,
   * as CPython does), and the tables, stats and footer (finalize). A write error is
   * ERR_TACHYON_WRITE_IO and breaks the writer. Then a checkpoint goes to the journal
   * (`<path>.journal`, unless `journal: false`) so `recover()` rebuilds all accepted;
   * version 2 seals its open block first and journals its heap chunks too.
   */
  flush(): number {
    this.checkOpen();
    try {
      this.engine.flushSamples();
      this.heap?.flush();
      const position = this.engine.output.position;
      // After the records: a checkpoint never names region bytes that are not on disk.
      const v2 =
        this.formatVersion === 2 ? { heap: this.heap, internals: this.internals, compression: this.compression } : null;
      this.keeper?.checkpoint(this.engine, this.strings, this.frames, v2);
      return position;
    } catch (err) {
      throw this.breakWith(err, 'flushing');
    }
  }

  /** Where heap events go into this file (its heap section, docs/format-v2.md §9): version 2 only. */
  heapSink<CallFrame>(options?: HeapSinkOptions<CallFrame>): HeapFileSink {
    this.checkOpen();
    const intern = (f: FrameSpec): number => this.internFrame(f);
    const sinkOptions = options as HeapSinkOptions<never> | undefined;
    return (this.heap ??= createHeapSink(this.formatVersion, intern, this.startTime, this.compression, sinkOptions));
  }

  /** The profile statistics block (56 bytes, before the footer), with CPython's checks. */
  setStats(durationSec: number, sampleRate: number, errorRate?: number | null, missedSamples?: number | null): void {
    this.checkOpen();
    this.statsValues = checkedStats(durationSec, sampleRate, errorRate, missedSamples);
  }

  /** CPython's counters. */
  get stats(): WriterStats {
    let c: Float64Array;
    if (this.finalCounters !== undefined) c = this.finalCounters;
    else if (this.stateValue === 'open') c = this.engine.counters();
    else c = new Float64Array(COUNTER_COUNT);
    return writerStats(c, this.stacksCut);
  }

  /**
   * Flushes pending REPEAT runs and the buffer, ends the zstd frame, appends
   * the string table, frame table, stats block and footer, patches the
   * header and closes the file (CPython's order, §5.7).
   */
  finalize(): WriterStats {
    this.checkOpen();
    try {
      this.engine.finishSamples();
      const heapSection = this.heap?.finish() ?? null; // its frames join the tables
      const counters = writeTrailer({
        engine: this.engine,
        slots: this.slots,
        header: this.header,
        formatVersion: this.formatVersion,
        strings: this.strings,
        frames: this.frames,
        heapSection,
        internals: this.internals,
        compression: this.compression,
        littleEndian: this.littleEndian,
        stats: this.statsValues,
        startTime: this.startTime,
        interval: this.interval,
        config: this.config,
      });
      this.finalCounters = counters;
      this.engine.release();
    } catch (err) {
      throw this.breakWith(err, 'finalizing');
    }
    this.stateValue = 'finalized';
    abandoned.unregister(this);
    this.keeper?.end(false);
    try {
      this.closeFd();
    } catch (err) {
      throw ioError(err, 'closing the file');
    }
    return this.stats;
  }

  /**
   * Discards: buffered samples are dropped and the file is left as it is on
   * disk (at least the 64 zero header bytes, so readers call it "not
   * finalized"). Idempotent; a no-op after finalize.
   */
  close(): void {
    if (this.stateValue === 'finalized' || this.stateValue === 'closed') return;
    this.keeper?.end(this.stateValue !== 'open');
    if (this.stateValue === 'open') this.finalCounters = Float64Array.from(this.engine.counters());
    this.engine.discard();
    this.engine.release();
    try {
      if (this.fd >= 0 && fs.fstatSync(this.fd).size < HEADER_SIZE)
        fs.writeSync(this.fd, new Uint8Array(HEADER_SIZE), 0, HEADER_SIZE, 0);
    } catch {
      // A discard on a failing file: there is nothing more to keep.
    }
    try {
      this.closeFd();
    } catch {
      // The descriptor may already be gone (the fault that broke the writer).
    }
    this.stateValue = 'closed';
    abandoned.unregister(this);
  }

  /** `using w = new ProfileWriter(...)`: finalizes when it still can (as CPython's __exit__), else closes. */
  [Symbol.dispose](): void {
    if (this.stateValue === 'open') {
      try {
        this.finalize();
      } finally {
        if ((this.stateValue as WriterState) !== 'finalized') this.close();
      }
    } else {
      this.close();
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return new Promise((resolve) => resolve(this[Symbol.dispose]()));
  }
}
