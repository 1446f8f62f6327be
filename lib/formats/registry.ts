/**
 * The formats profpack reads and writes, by name, by file name and by
 * content. ADAPTERS is the one list: the FormatName type, detection order,
 * `--to` choices, help text and convert's limits follow from it, so adding a
 * format is one adapter file and one line here (test/formats/one-list.test.ts).
 */
import { writeSync } from 'node:fs';
import { ErrorCode, ProfpackError } from '../errors';
import { fsError, readInputFile, readInputHead } from '../input';
import { AtomicOutput } from '../output-file';
import { withoutProfilerFrames, type ProfileSource } from '../profile/index';
import type { FormatAdapter, ReadOptions, WriteOptions, WriteTarget } from './adapter';
import { collapsedAdapter } from './collapsed';
import { cpuprofileAdapter } from './devtools/index';
import { heapprofileAdapter } from './devtools/index';
import { refusal } from './refuse';
import { gunzipBounded, gunzipHead, isGzip } from './gzip';
import { pprofAdapter } from './pprof/index';
import { tachyonAdapter } from './tachyon/index';
import { HEAD_BYTES } from './sniff';
import { speedscopeAdapter } from './speedscope';

/** Every format, in the order content detection tries them: the binary ones by magic, then text. */
export const ADAPTERS = [
  tachyonAdapter,
  pprofAdapter,
  speedscopeAdapter,
  heapprofileAdapter,
  cpuprofileAdapter,
  collapsedAdapter,
] as const;

/** A format profpack handles: the name of one of ADAPTERS. */
export type FormatName = (typeof ADAPTERS)[number]['name'];

export const FORMAT_NAMES: readonly FormatName[] = ADAPTERS.map((a) => a.name);

/** The formats' short names for help text and messages ("Tachyon, pprof, …"), those `which` keeps. */
export function formatLabels(which: (adapter: FormatAdapter) => boolean = () => true, last = ', '): string {
  const labels = ADAPTERS.filter(which).map((a) => a.label);
  return labels.length < 2 ? labels.join('') : `${labels.slice(0, -1).join(', ')}${last}${labels.at(-1)!}`;
}

export function isFormatName(value: string): value is FormatName {
  return (FORMAT_NAMES as string[]).includes(value);
}

export function adapterFor(name: FormatName): FormatAdapter {
  const adapter: FormatAdapter | undefined = ADAPTERS.find((a) => a.name === name);
  if (adapter === undefined)
    throw new ProfpackError(`profpack does not handle ${name} files`, {
      code: ErrorCode.CONVERT_UNKNOWN_FORMAT,
      expected: FORMAT_NAMES.join(' | '),
    });
  return adapter;
}

/** The format a file name suggests, if any. */
export function formatFromPath(file: string): FormatName | undefined {
  const p = file.toLowerCase();
  let best: { name: FormatName; length: number } | undefined;
  for (const a of ADAPTERS)
    for (const ext of a.extensions)
      if (p.endsWith(ext) && (best === undefined || ext.length > best.length))
        best = { name: a.name, length: ext.length };
  return best?.name;
}

export interface Recognized {
  /** A format profpack reads. */
  format?: FormatName;
  /** What the file is, when it is a profile profpack refuses ("Firefox profiler (Gecko) JSON"). */
  refused?: string;
  /** The file is gzip: detection ran on its inflated start. */
  gzipped?: boolean;
}

/**
 * What a file's first bytes are: a format of ADAPTERS (in their order), a refusal (refuse.ts), or nothing known.
 * A gzip is inflated here, once, and only adapters whose files may be gzipped see it.
 */
export function recognize(bytes: Uint8Array): Recognized {
  const gzipped = isGzip(bytes);
  let head = bytes.subarray(0, HEAD_BYTES);
  let partial = bytes.length >= HEAD_BYTES;
  if (gzipped) {
    ({ head, partial } = gunzipHead(bytes, HEAD_BYTES));
    if (head.length === 0 || isGzip(head)) return { gzipped };
  }
  const seen = (found: Omit<Recognized, 'gzipped'>): Recognized => (gzipped ? { ...found, gzipped } : found);
  // No format's first bytes are a refused one's (refuse.ts), so the order between the two lists does not matter.
  const refused = refusal(head);
  if (refused !== undefined) return seen({ refused });
  for (const a of ADAPTERS)
    if ((!gzipped || a.mayBeGzipped === true) && a.detect(head, partial)) return seen({ format: a.name });
  return gzipped ? { gzipped } : {};
}

/** The format of a file's content (its first 4 KiB decide; a gzip wrapper is looked through). */
export function detectFormat(bytes: Uint8Array): FormatName {
  const seen = recognize(bytes);
  if (seen.refused !== undefined) {
    throw new ProfpackError(
      `this is ${seen.refused}${seen.gzipped === true ? ' (gzipped)' : ''}: profpack does not read it`,
      {
        code: ErrorCode.CONVERT_UNSUPPORTED_FORMAT,
        offset: 0,
        expected: ADAPTERS.map((a) => a.title).join(', '),
        details: { recognized: seen.refused },
      },
    );
  }
  if (seen.format !== undefined) return seen.format;
  throw new ProfpackError(`cannot tell the input format (not ${ADAPTERS.map((a) => a.title).join(', ')})`, {
    code: ErrorCode.CONVERT_UNKNOWN_FORMAT,
    offset: 0,
    expected: FORMAT_NAMES.join(' | '),
  });
}

export interface OpenOptions extends ReadOptions {
  /** The format, when not detected from the content. */
  format?: FormatName;
}

export type OpenedProfile = ProfileSource & { readonly format: FormatName; close(): void };

function opened(source: ProfileSource, format: FormatName): OpenedProfile {
  return Object.assign(source, { format, close: source.close ?? (() => undefined) });
}

/** A whole file's content as its format's reader takes it: gzip undone where the format may be gzipped. */
function inflated(bytes: Uint8Array, format: FormatName, options: ReadOptions): Uint8Array {
  return isGzip(bytes) && adapterFor(format).mayBeGzipped === true
    ? gunzipBounded(bytes, options.maxInflatedBytes)
    : bytes;
}

/** Reads a profile held in memory. */
export function readProfile(bytes: Uint8Array, options: OpenOptions = {}): OpenedProfile {
  const format = options.format ?? detectFormat(bytes);
  return opened(adapterFor(format).read({ bytes: inflated(bytes, format, options) }, options), format);
}

/** Opens a profile file: Tachyon files stream from disk, others are read whole. */
export function openProfile(file: string, options: OpenOptions = {}): OpenedProfile {
  let format = options.format;
  if (format === undefined) {
    // The head decides (a Tachyon file of gigabytes is then streamed, never read whole to sniff it).
    const head = readInputHead(file, 1 << 16);
    try {
      format = detectFormat(head);
    } catch (err) {
      // Content no format recognises (a JSON document cut short, say) is read as its name says, so that
      // its reader names what is wrong where; without a telling name the detection's error stands.
      const named = formatFromPath(file);
      if (
        !(err instanceof ProfpackError && err.code === ErrorCode.CONVERT_UNKNOWN_FORMAT) ||
        named === undefined ||
        named === 'tachyon'
      )
        throw err;
      format = named;
    }
  }
  if (format === 'tachyon') return opened(adapterFor('tachyon').read({ path: file }, options), format);
  if (adapterFor(format).readsFromPath === true && !isGzip(readInputHead(file, 2)))
    return opened(adapterFor(format).read({ path: file }, options), format);
  const bytes = readInputFile(file);
  return opened(adapterFor(format).read({ path: file, bytes: inflated(bytes, format, options) }, options), format);
}

/**
 * Writes a source as `format` into `file` through a temporary file in the
 * same directory, renamed at the end (lib/output-file.ts): a failed write
 * leaves the old output or nothing, never a partial file.
 */
export function writeProfile(
  source: ProfileSource,
  file: string,
  format: FormatName,
  options: WriteOptions = {},
): void {
  const adapter = adapterFor(format);
  if (adapter.write === undefined)
    throw new ProfpackError(`profpack reads ${adapter.title} files but does not write them`, {
      code: ErrorCode.CONVERT_UNKNOWN_FORMAT,
      expected: ADAPTERS.filter((a: FormatAdapter) => a.write !== undefined)
        .map((a) => a.name)
        .join(' | '),
    });
  const out = new AtomicOutput(file);
  const target: WriteTarget = {
    path: out.writePath,
    write(chunk) {
      const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      let done = 0;
      try {
        while (done < data.length) done += writeSync(out.fd, data, done, data.length - done);
      } catch (err) {
        throw fsError(err, file, 'write');
      }
    },
  };
  try {
    // A format that writes its own file (Tachyon) replaces the empty temporary file.
    // Every output but Tachyon hides CPython's own profiler frames, as CPython's collectors do; a Tachyon
    // rewrite keeps the file's frames as its binary collector does (lib/profile/profiler-frames.ts).
    adapter.write(format === 'tachyon' ? source : withoutProfilerFrames(source), target, options);
  } catch (err) {
    out.abort();
    if (err instanceof ProfpackError) throw err;
    throw fsError(err, file, 'write');
  }
  out.commit();
}
