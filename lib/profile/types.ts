/**
 * The one profile model every format, query and view goes through, with
 * pprof's semantics: a profile measures things. It has sample types
 * (`{ type, unit }`: samples/count, cpu/nanoseconds, inuse_space/bytes…) and
 * each sample carries one value per type, a stack, a thread, a time where the
 * source has one, a status byte (Tachyon's) and a label set.
 *
 * Samples travel in columnar batches (typed arrays), never one object per
 * sample and never one sample per unit of value: a pprof sample of 10^9 bytes
 * is one record with value 10^9. Stacks are ids in a prefix table
 * (StackTable), so a repeated stack costs one number.
 */
import type { RecordedBy } from '../recorded-by';

/** One frame, in the field names of Tachyon's frame table, as CPython's reader hands it out; `null` = absent. */
export interface Frame {
  readonly filename: string;
  readonly funcname: string;
  /** null when the stored lineno is -1: CPython then returns location None, columns included. */
  readonly lineno: number | null;
  readonly endLineno: number | null;
  readonly column: number | null;
  readonly endColumn: number | null;
  /** null for the stored 255. */
  readonly opcode: number | null;
}

/** What a value column measures, in pprof's words (`cpu`/`nanoseconds`, `alloc_space`/`bytes`, `samples`/`count`). */
export interface SampleType {
  type: string;
  unit: string;
}

/** A sample label: a string, or a number with an optional unit (pprof's Label). */
export interface Label {
  key: string;
  str?: string;
  num?: number;
  unit?: string;
}

/** A thread: Tachyon's (thread_id, interpreter_id), with a name where the source has one. */
export interface ThreadRef {
  threadId: bigint;
  interpreterId: number;
  name?: string;
}

/** Tachyon's statistics block (CPython's `set_stats`): the duration in seconds, passes a second, two percentages. */
export interface SamplerStats {
  durationSec: number;
  sampleRate: number;
  errorRate?: number;
  missedSamples?: number;
}

export interface ProfileMeta {
  /** What each value column measures; never empty. */
  sampleTypes: SampleType[];
  /** Index into sampleTypes of the type shown by default (pprof's default_sample_type). */
  defaultSampleType: number;
  /** What one sampling event measures (pprof's period_type / period), when the source says. */
  periodType?: SampleType;
  period?: number;
  /** Start in µs: the Unix epoch when isEpochUs() says so, else the source's own clock. */
  startTimeUs: bigint;
  /** The same start in ns where the source gives ns (pprof time_nanos), so pprof → pprof keeps its digits. */
  startTimeNs?: bigint;
  /** The nominal sampling interval in µs (Tachyon's header field); 0 when the source has none. */
  sampleIntervalUs: bigint;
  /** Duration the source states (pprof duration_nanos, Tachyon's stats block, a recording's span). */
  durationUs?: bigint;
  /**
   * A Tachyon file's statistics block as its sampler wrote it, kept by Tachyon rewrites: CPython's sample_rate
   * counts sampling passes a second (a pass samples every thread, and a failed pass counts too), and
   * error_rate and missed_samples are percentages; none can be derived again from the ticks.
   */
  samplerStats?: SamplerStats;
  /** Free text the source carries (pprof comments). */
  comments?: string[];
  /**
   * The recorded process, when the file says (a profpack Node recording:
   * host/pid/start): the files rotated from one process share it, so their
   * threads are the same threads.
   */
  processIdentity?: string;
  /** What recorded it, when the file says (a profpack Node recording: lib/recorded-by.ts). */
  recordedBy?: RecordedBy;
  /** Name of the format the profile was read from (a FormatName) and what wrote it, where known. */
  origin?: { format: string; producer?: string };
}

/**
 * A batch of samples as columns, all of `length` entries. A source may reuse
 * one batch object (and its arrays) for the next batch: consume it before
 * asking for the next.
 */
export interface SampleBatch {
  length: number;
  /** Stack id in the source's StackTable (0 = the empty stack). */
  stack: Uint32Array;
  /** Index into the source's threads. */
  thread: Uint32Array;
  /** Time in µs on the meta's clock; NaN where the source has none. Exact below 2^53 µs (285 years). */
  time: Float64Array;
  /** Tachyon status byte (ThreadStatus bits, NodeStatus.InGc). */
  status: Uint8Array;
  /** One column per sample type, in meta.sampleTypes order. Exact integers below 2^53. */
  values: Float64Array[];
  /** Label set id in the source's LabelSets (0 = no labels). */
  labels: Uint32Array;
}
