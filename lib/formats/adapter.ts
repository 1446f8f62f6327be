/**
 * What a format adapter is: one file (or folder) per format under lib/formats/,
 * one line in registry.ts's ADAPTERS, from which names, detection order, `--to`
 * choices, help text and limits all follow. `detect` looks at the first 4 KiB,
 * gzip already undone when the format says it may be gzipped; `read` makes a
 * model source; `write` streams a source out in chunks (never one string or
 * buffer per file: a 1 M-sample output must not hit V8's string limit).
 */
import type { ProfileSource } from '../profile/index';

export interface ReadInput {
  /** The file's path, when read from a file (streaming formats read it themselves). */
  path?: string;
  /** The whole content (gunzipped if it was gzip), for formats parsed whole. */
  bytes?: Uint8Array;
}

export interface ReadOptions {
  /** The sample rate a tick format assumes when it has none (collapsed: µs per count); default 1000. */
  sampleIntervalUs?: bigint;
  /** Warnings (dropped fields, guesses) for the caller to show; default: none shown. */
  onWarning?: (message: string) => void;
  /** Largest content a gzipped file may inflate to (default 1 GiB): a small gzip can hold a huge file. */
  maxInflatedBytes?: number;
  /**
   * The caller reads the records once, in order, and nothing else of them (convert to pprof): a reader may then
   * stream them from the file rather than hold them (the .cpuprofile reader does, for a file that is not gzip).
   */
  recordsOnce?: boolean;
}

export interface WriteTarget {
  /** Where the output goes (formats that write files themselves, Tachyon, use this). */
  path: string;
  /** Appends bytes or UTF-8 text to the output. */
  write(chunk: Uint8Array | string): void;
}

export interface WriteOptions {
  /**
   * The value column to write where the format holds one (collapsed, speedscope, .cpuprofile, .heapprofile); default
   * the profile's default type.
   */
  sampleType?: string;
  /** pprof: one sample per distinct (stack, thread, labels) instead of one per record. */
  aggregate?: boolean;
  /** .cpuprofile / .heapprofile: only this thread ("ID" or "ID@INTERPRETER"); default the busiest. */
  thread?: string;
  /** Tachyon: compression and format version. */
  compression?: 'zstd' | 'none';
  version?: 1 | 2;
  onWarning?: (message: string) => void;
}

export interface FormatAdapter<Name extends string = string> {
  readonly name: Name;
  /** What people call it, for messages ("pprof (profile.proto)"). */
  readonly title: string;
  /** Its short name in help text ("pprof", ".cpuprofile"). */
  readonly label: string;
  /** File name endings that suggest it, lower case, longest first. */
  readonly extensions: readonly string[];
  /**
   * Whether these first bytes (at most 4 KiB, gzip undone when mayBeGzipped) are this format; `partial` when the
   * head stops before the end of the file, so a field may be cut.
   */
  detect(head: Uint8Array, partial?: boolean): boolean;
  /** Its files may come gzipped: detection and reading see the inflated bytes. */
  readonly mayBeGzipped?: boolean;
  /** read({ path }) reads the file itself a piece at a time: openProfile hands it the path of a file not gzipped. */
  readonly readsFromPath?: boolean;
  /** write() builds the whole output in memory: convert() bounds the samples (ConvertOptions.maxSamples). */
  readonly writesWhole?: boolean;
  read(input: ReadInput, options: ReadOptions): ProfileSource;
  write?(source: ProfileSource, target: WriteTarget, options: WriteOptions): void;
}
