/**
 * Compatibility shims: the names lib/convert exported before the profile model change (cd4e6e3), now over
 * lib/formats and lib/profile. Each accepts the old argument shapes (an old-style source with `samples()` or a
 * new ProfileSource) and says in its comment what changed. New code uses the API each one names.
 */
import { defaultCompression } from '../tachyon/index';
import { ErrorCode, ProfpackError } from '../errors';
import {
  MAX_VERSION1_TICKS,
  adapterFor,
  openProfile,
  readProfile,
  type FormatName,
  type WriteOptions,
} from '../formats/index';
import { chooseSampleType, type ProfileSource } from '../profile/index';
import { ProfileReader, ProfileWriter } from '../tachyon/index';
import { isLegacySource, isModelSource, notASource, withLegacyView, type CompatSource } from './legacy';
import { MemoryProfile } from './memory';
import type { LegacyProfileSource, ProfileSink } from './legacy';

export { MemoryProfile, copyProfile } from './memory';
export type { ModelSample, ProfileSink, LegacyProfileMeta, LegacyProfileSource, CompatSource } from './legacy';

type AnySource = LegacyProfileSource | ProfileSource;

/** What openTachyon returns: a streaming source in both shapes, with the file's ProfileReader. */
export type TachyonCompatSource = CompatSource & { readonly reader: ProfileReader; close(): void };

/** A new ProfileSource for either shape (an old-style one is copied into a MemoryProfile). */
function modelOf(source: AnySource): ProfileSource {
  if (isModelSource(source)) return source;
  if (isLegacySource(source)) return MemoryProfile.from(source);
  return notASource();
}

/** What a format's writer makes of a source, as bytes (the writers stream chunks; these are joined). */
function writeBytes(source: AnySource, format: FormatName, options: WriteOptions): Buffer {
  const chunks: Buffer[] = [];
  adapterFor(format).write!(
    modelOf(source),
    { path: '', write: (c) => chunks.push(typeof c === 'string' ? Buffer.from(c, 'utf8') : Buffer.from(c)) },
    options,
  );
  return Buffer.concat(chunks);
}

function writeJson(source: AnySource, format: FormatName, options: WriteOptions): unknown {
  return JSON.parse(writeBytes(source, format, options).toString('utf8'));
}

/** A JSON document given parsed (the old readers' input), as text, or as bytes. */
function jsonBytes(input: unknown, what: string): Uint8Array {
  if (input instanceof Uint8Array) return input;
  if (typeof input === 'string') return Buffer.from(input, 'utf8');
  let text: string | undefined;
  try {
    text = JSON.stringify(input);
  } catch (err) {
    // A circular or BigInt-holding object is no JSON document.
    throw new ProfpackError(`not a ${what}: ${err instanceof Error ? err.message : String(err)}`, {
      code: ErrorCode.CONVERT_BAD_INPUT,
      expected: `a parsed ${what} document, its text or its bytes`,
      cause: err,
    });
  }
  return Buffer.from(text ?? '', 'utf8');
}

/** The reader's source with the old surface, weights from `sampleType` (also made the default type) when named. */
function compat(source: ProfileSource, sampleType?: string): CompatSource {
  if (sampleType === undefined) return withLegacyView(source);
  const column = chooseSampleType(source.meta, sampleType);
  source.meta.defaultSampleType = column;
  return withLegacyView(source, column);
}

/**
 * Model → pprof bytes (gzipped): what `writeProfile(source, file, 'pprof', { aggregate })` writes.
 * @deprecated Use `writeProfile(source, file, 'pprof')` or `convert` (lib/formats).
 */
export function toPprof(source: AnySource, options: { aggregate?: boolean; gzipLevel?: number } = {}): Uint8Array {
  return writeBytes(source, 'pprof', options);
}

/**
 * pprof bytes (gzipped or not) → a source. What changed: a sample's value is one record with that weight (the old
 * source repeated it); all sample types are kept, `sampleType` picks the weight and the default type.
 * @deprecated Use `readProfile(bytes, { format: 'pprof' })` (lib/formats).
 */
export function fromPprof(bytes: Uint8Array, options: { sampleType?: string } = {}): CompatSource {
  return compat(readProfile(bytes, { format: 'pprof' }), options.sampleType);
}

/**
 * Model → a .cpuprofile object (what the cpuprofile writer writes, parsed). What changed: without `thread`, the
 * busiest thread is written.
 * @deprecated Use `writeProfile(source, file, 'cpuprofile', { thread })` (lib/formats).
 */
export function toCpuProfile(source: AnySource, options: { thread?: string } = {}): Record<string, unknown> {
  return writeJson(source, 'cpuprofile', { thread: options.thread }) as Record<string, unknown>;
}

/**
 * A .cpuprofile (parsed object, text or bytes) → a MemoryProfile. `threadId` names the thread of a profile without
 * profpack's thread metadata (read as thread 0).
 * @deprecated Use `readProfile(bytes, { format: 'cpuprofile' })` (lib/formats).
 */
export function fromCpuProfile(input: unknown, options: { threadId?: bigint } = {}): MemoryProfile {
  const source = readProfile(jsonBytes(input, '.cpuprofile'), { format: 'cpuprofile' });
  const out = MemoryProfile.from(source);
  const threadId = options.threadId;
  if (threadId === undefined || threadId === 0n || !out.threads.some((t) => t.threadId === 0n)) return out;
  const renamed = new MemoryProfile(out.meta);
  const sink: ProfileSink = {
    internFrame: (f) => renamed.internFrame(f),
    writeStack: (tid, ...rest) => renamed.writeStack(tid === 0n ? threadId : tid, ...rest),
  };
  for (const s of out.samples()) {
    const ids = Array.from(s.stack, (f) => sink.internFrame(out.frames[f]!));
    sink.writeStack(s.threadId, s.interpreterId, s.timestampUs, s.status, ids, s.weight);
  }
  return renamed;
}

/**
 * Model → collapsed stacks text (what the collapsed writer writes).
 * @deprecated Use `writeProfile(source, file, 'collapsed')` (lib/formats).
 */
export function toCollapsed(source: AnySource): string {
  return writeBytes(source, 'collapsed', {}).toString('utf8');
}

/**
 * Collapsed stacks text → a MemoryProfile. What changed: a line's count is one record of that weight.
 * @deprecated Use `readProfile(bytes, { format: 'collapsed', sampleIntervalUs })` (lib/formats).
 */
export function fromCollapsed(text: string, sampleIntervalUs = 1000n): MemoryProfile {
  return MemoryProfile.from(readProfile(Buffer.from(text, 'utf8'), { format: 'collapsed', sampleIntervalUs }));
}

/**
 * Model → a speedscope file object (what the speedscope writer writes, parsed); `name`, when given, names it.
 * @deprecated Use `writeProfile(source, file, 'speedscope')` (lib/formats).
 */
export function toSpeedscope(source: AnySource, name?: string): Record<string, unknown> {
  const file = writeJson(source, 'speedscope', {}) as Record<string, unknown>;
  if (name !== undefined) file.name = name;
  return file;
}

/**
 * A speedscope file (parsed object, text or bytes) → a MemoryProfile.
 * @deprecated Use `readProfile(bytes, { format: 'speedscope' })` (lib/formats).
 */
export function fromSpeedscope(input: unknown): MemoryProfile {
  return MemoryProfile.from(readProfile(jsonBytes(input, 'speedscope file'), { format: 'speedscope' }));
}

/**
 * Any supported profile in memory → a source, through the registry (format detected when not given). What changed:
 * every format the registry reads is accepted (heapprofile too), and a Tachyon buffer streams instead of being
 * copied into a MemoryProfile.
 * @deprecated Use `readProfile(bytes, { format })` (lib/formats).
 */
export function parseProfile(
  bytes: Uint8Array,
  format?: FormatName,
  options: { sampleType?: string } = {},
): CompatSource {
  return compat(readProfile(bytes, { format }), options.sampleType);
}

/**
 * A source → the bytes of a non-Tachyon format, through the registry's writers.
 * @deprecated Use `writeProfile(source, file, format, options)` (lib/formats).
 */
export function serializeProfile(
  source: AnySource,
  format: Exclude<FormatName, 'tachyon'>,
  options: { aggregate?: boolean; thread?: string } = {},
): Uint8Array {
  if ((format as FormatName) === 'tachyon')
    throw new ProfpackError('serializeProfile does not write Tachyon (a file format): use writeProfile', {
      code: ErrorCode.CONVERT_UNKNOWN_FORMAT,
      expected: 'pprof | cpuprofile | speedscope | collapsed',
    });
  return writeBytes(source, format, { aggregate: options.aggregate, thread: options.thread });
}

/**
 * A Tachyon file (path) or buffer, streaming, with its ProfileReader (opened on first use of `reader`).
 * @deprecated Use `openProfile(path)` / `readProfile(bytes)` (lib/formats) or `ProfileReader` (lib/tachyon).
 */
export function openTachyon(input: string | Uint8Array): TachyonCompatSource {
  const source = withLegacyView(
    typeof input === 'string' ? openProfile(input, { format: 'tachyon' }) : readProfile(input, { format: 'tachyon' }),
    0,
  );
  let reader: ProfileReader | undefined;
  const close = source.close.bind(source);
  return Object.defineProperties(source, {
    reader: {
      get: () => (reader ??= typeof input === 'string' ? ProfileReader.open(input) : ProfileReader.fromBuffer(input)),
    },
    close: {
      value: () => {
        reader?.close();
        close();
      },
    },
  }) as unknown as TachyonCompatSource;
}

function weightedTicks(message: string): ProfpackError {
  return new ProfpackError(`${message}; write format version 2 (writeProfile, version: 2) to keep weights`, {
    code: ErrorCode.TACHYON_V1_WEIGHTED,
    expected: 'a whole number of ticks',
  });
}

/**
 * A Tachyon sink over ProfileWriter (version 1, one tick per sample). A record of weight n is n ticks one interval
 * apart (ProfileWriter stores them as a run), as the Tachyon adapter writes ticks.
 * @deprecated Use `ProfileWriter` (lib/tachyon) or `writeProfile(source, file, 'tachyon')` (lib/formats).
 */
export function createTachyonSink(
  path: string,
  options: {
    sampleIntervalUs: bigint;
    startTimeUs: bigint;
    compression?: 'zstd' | 'none';
    mode?: number;
    flushIntervalMs?: number;
  },
): ProfileSink & { setStats(durationSec: number, sampleRate: number): void; finalize(): void; close(): void } {
  const writer = new ProfileWriter(path, {
    sampleIntervalUs: options.sampleIntervalUs,
    startTimeUs: options.startTimeUs,
    compression: options.compression ?? defaultCompression(),
    mode: options.mode ?? null,
    flushIntervalMs: options.flushIntervalMs,
  });
  const interval = options.sampleIntervalUs;
  let extraTicks = 0;
  return {
    internFrame: (frame) => writer.internFrame(frame),
    writeStack(threadId, interpreterId, timestampUs, status, frameIds, weight = 1) {
      if (!Number.isInteger(weight) || weight < 0)
        throw weightedTicks(`a record weighs ${weight}: Tachyon version 1 holds whole ticks`);
      // The ticks a weight adds are bounded as the Tachyon adapter bounds them.
      extraTicks += Math.max(0, weight - 1);
      if (extraTicks > MAX_VERSION1_TICKS) throw weightedTicks(`the weights add more than ${MAX_VERSION1_TICKS} ticks`);
      const ids = frameIds as Uint32Array | readonly number[];
      for (let k = 0n; k < BigInt(weight); k++)
        writer.writeStack(threadId, interpreterId, timestampUs + k * interval, status, ids);
    },
    setStats: (durationSec, sampleRate) => writer.setStats(durationSec, sampleRate),
    finalize: () => {
      writer.finalize();
    },
    close: () => writer.close(),
  };
}
