/** The heap side of the CLI's file inputs: --heap/--at/heap sample types, and the heap trace of FILE|DIR. */
import { ProfpackError } from '../errors';
import { listProfileFiles, warnSkipped } from '../fleet/index';
import { detectFormat, openProfile, tachyonRecordedBy } from '../formats/index';
import { readInputHead } from '../input';
import {
  HEAP_TYPE_NAMES,
  requireHeapFiles,
  parseHeapMoment,
  type HeapMoment,
  type HeapProfileInfo,
  type HeapTraceSource,
} from '../memory/index';
import { formatValue } from '../profile/index';

/**
 * Whether a command asks a recording's heap events: --heap, --at, a heap
 * sample type the profile itself does not have (a Go or .heapprofile heap
 * profile has its own, and is read as it is), or no sample type on a
 * heap-only recording (its heap is all it holds).
 */
export function wantsHeap(
  flags: { heap?: boolean; at?: unknown; sampleType?: string },
  inputs: readonly string[],
): boolean {
  if (flags.heap === true || flags.at !== undefined) return true;
  const type = flags.sampleType?.split('/')[0];
  if (type === undefined) return isHeapOnly(inputs);
  if (!HEAP_TYPE_NAMES.includes(type)) return false;
  const profile = openProfile(firstFile(inputs));
  try {
    // Only a Tachyon file holds heap events; any other profile without the type is refused as a type it lacks.
    return profile.meta.origin?.format === 'tachyon' && !profile.meta.sampleTypes.some((t) => t.type === type);
  } finally {
    profile.close();
  }
}

/**
 * Whether the inputs are a heap-only recording (`record --heap --no-cpu`): heap events and no CPU samples. The
 * first file answers for all: a recording's files (a rotated directory) share its settings.
 */
export function isHeapOnly(inputs: readonly string[]): boolean {
  try {
    const file = firstFile(inputs);
    // Only a Tachyon recording says what recorded it; any other input is read by the command alone (opening a
    // 45 MB .cpuprofile here parsed it twice: half of a conversion's CPU). Its string table says it: an open would
    // also decompress and check a zstd sample region, which the command does again.
    if (detectFormat(readInputHead(file)) !== 'tachyon') return false;
    return tachyonRecordedBy(file)?.cpu === false;
  } catch (err) {
    // An input that does not open is the command's to refuse, with its own code (ERR_IO, ERR_NOT_REGULAR_FILE...).
    if (err instanceof ProfpackError) return false;
    throw err;
  }
}

/** The first input file, listed quietly: the command lists the inputs again and warns about what it skips once. */
function firstFile(inputs: readonly string[]): string {
  return listProfileFiles(inputs, { onSkipped: () => undefined })[0]!;
}

export function heapMoment(text: string | undefined): HeapMoment | undefined {
  return text === undefined ? undefined : parseHeapMoment(text);
}

/** The heap trace of the inputs (files, directories); refuses inputs with no heap events. */
export function openHeapInputs(inputs: readonly string[]): HeapTraceSource {
  // Each file opened once: the listing leaves the unfinished-header check to the heap reader, which opens it anyway.
  const files = listProfileFiles(inputs, { unfinished: 'caller' });
  return requireHeapFiles(files, {
    unchecked: files.unchecked,
    onSkipped: warnSkipped,
  });
}

/** Which heap sampler recorded the inputs (the first file answers for all), if the recording says. */
export function heapSamplerOf(inputs: readonly string[]): 'native' | 'inspector' | undefined {
  const profile = openProfile(firstFile(inputs));
  try {
    return profile.meta.recordedBy?.heapSampler;
  } finally {
    profile.close();
  }
}

/**
 * Whether `info`'s peak may count garbage: the native sampler's polls force no GC (docs/memory.md), so an object
 * dead but not yet collected is live at them; only the last poll collects first. The inspector's every poll does.
 */
export function peakIncludesGarbage(info: HeapProfileInfo, sampler: string | undefined): boolean {
  return sampler === 'native' && info.peakMs < info.endMs;
}

/** What a heap answer stands on, one line. */
export function heapInfoLine(info: HeapProfileInfo, sampler?: string): string {
  const b = (v: number) => formatValue(v, 'bytes');
  const at = info.at === 'peak' ? 'the peak' : info.at === 'end' ? 'the end' : 'a moment';
  const parts = [
    `in use at ${at} (${info.atMs.toLocaleString('en')} ms); ` +
      `live bytes (estimated) peak at ${b(info.peakBytes)}, ${info.peakMs.toLocaleString('en')} ms, ` +
      `${b(info.endBytes)} at the end`,
    `${info.polls} polls, ${info.allocations} sampled allocations, ${info.frees} frees`,
  ];
  if (info.at === 'peak' && peakIncludesGarbage(info, sampler))
    parts.push(
      "the peak's poll forced no GC (native sampler): it includes garbage not yet collected, " +
        'which the end, collected first, does not',
    );
  if (info.shortLived > 0)
    parts.push(
      `${info.shortLived} sampled objects born and freed between two polls ` +
        `(~${b(info.shortLivedBytesEstimate)}) have no stack and are in no row`,
    );
  return parts.join('; ');
}
