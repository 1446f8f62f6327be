/**
 * Many profile files as one streaming `ProfileSource`: the engine of
 * `profpack top`/`merge` over a fleet's files (and of any other command that
 * takes many files, e.g. `flame`).
 *
 * One file is open at a time; frames are merged into one table (deduplicated
 * on all seven fields, as MemoryProfile does); a thread keeps its id unless an
 * earlier file already used the same (thread id, interpreter id), in which
 * case it gets the next free id, so threads of different files stay apart —
 * but files rotated from one process (the same ProfileMeta.processIdentity)
 * keep one id per thread: one single-threaded program is one thread.
 * Times are kept as the files store them (absolute µs).
 */
import { formatFromPath, openProfile, type OpenedProfile } from '../formats/index';
import {
  FrameTable,
  LabelSets,
  Remapper,
  SampleTypes,
  StackTable,
  ThreadTable,
  sampleTypeName,
  threadKey,
  type Frame,
  type Label,
  type ProfileMeta,
  type ProfileSource,
  type SampleBatch,
  type SampleType,
} from '../profile/index';
import { listProfileFiles } from './listing';

export { listProfileFiles, warnSkipped, type ListedFiles } from './listing';

/** A Tachyon file by its name is opened without reading it whole to sniff its format. */
function openFile(file: string): OpenedProfile {
  return openProfile(file, { format: formatFromPath(file) === 'tachyon' ? 'tachyon' : undefined });
}

export interface FleetSource extends ProfileSource {
  /** The files, in the order their samples are read. */
  readonly files: readonly string[];
  /**
   * Per file, its threads as renumbered (original "ID[@INTERP]" → the id the
   * merged stream uses); filled while batches() reads the file.
   */
  readonly threadMaps: ReadonlyMap<string, bigint>[];
  /** Called before each file's samples are read (index, path). */
  onFile?: (index: number, file: string) => void;
  close(): void;
}

/**
 * Opens `inputs` (files and directories) as one source. `meta.startTimeUs` is
 * the earliest file's start and the sample types are the union of the files'
 * (by type and unit; a file without a type contributes 0 to its column) —
 * asking for meta opens every file once; `meta.sampleIntervalUs` is the first
 * file's.
 */
export function openProfiles(inputs: readonly string[]): FleetSource {
  const files = listProfileFiles(inputs);
  const frames = new FrameTable();
  const threads = new ThreadTable();
  const labelSets = new LabelSets();
  const stacks = new StackTable();
  const claimed = new Set<string>();
  /** Files of one recorded process (rotated) share threads: "identity\0thread key" → merged id. */
  const processThreads = new Map<string, bigint>();
  /** The merged threads' names, filled as samples() meets them. */
  let maxThreadId = -1n;
  const threadMaps: Map<string, bigint>[] = files.map(() => new Map());
  let meta: ProfileMeta | undefined;
  let sampleCount: number | undefined;
  const scanHeaders = (): void => {
    let start: bigint | undefined;
    let interval: bigint | undefined;
    let count = 0;
    const types: SampleType[] = [];
    let defaultType: string | undefined;
    // What recorded the files, when they are all one process's (rotated files).
    let recordedBy: ProfileMeta['recordedBy'];
    const identities = new Set<string | undefined>();
    for (const file of files) {
      const src = openFile(file);
      try {
        if (start === undefined || src.meta.startTimeUs < start) start = src.meta.startTimeUs;
        interval ??= src.meta.sampleIntervalUs;
        count = src.sampleCount === undefined || Number.isNaN(count) ? NaN : count + src.sampleCount;
        for (const t of src.meta.sampleTypes)
          if (!types.some((u) => sampleTypeName(u) === sampleTypeName(t))) types.push({ ...t });
        defaultType ??= sampleTypeName(src.meta.sampleTypes[src.meta.defaultSampleType]!);
        identities.add(src.meta.processIdentity);
        recordedBy ??= src.meta.recordedBy;
      } finally {
        src.close();
      }
    }
    if (types.length === 0) types.push({ ...SampleTypes.samples });
    const defaultIndex = types.findIndex((t) => sampleTypeName(t) === defaultType);
    meta = {
      sampleTypes: types,
      defaultSampleType: Math.max(0, defaultIndex),
      startTimeUs: start ?? 0n,
      sampleIntervalUs: interval ?? 1000n,
    };
    if (identities.size === 1 && recordedBy !== undefined) {
      meta.recordedBy = recordedBy;
      meta.processIdentity = [...identities][0];
    }
    sampleCount = Number.isNaN(count) ? undefined : count;
  };
  const target = {
    stacks,
    internFrame: (f: Frame) => frames.intern(f),
    internThread: (id: bigint, interp = 0, name?: string) => threads.intern(id, interp, name),
    internLabels: (labels: readonly Label[]) => labelSets.intern(labels),
  };

  const source: FleetSource = {
    files,
    threadMaps,
    get meta() {
      if (meta === undefined) scanHeaders();
      return meta!;
    },
    get sampleCount() {
      if (meta === undefined) scanHeaders();
      return sampleCount;
    },
    get frames() {
      return frames.list;
    },
    stacks,
    get threads() {
      return threads.list;
    },
    get labelSets() {
      return labelSets.list;
    },
    *batches(): Iterable<SampleBatch> {
      const merged = source.meta;
      // Renumbering starts afresh: a second pass gives the same ids as the first.
      claimed.clear();
      processThreads.clear();
      maxThreadId = -1n;
      for (const m of threadMaps) m.clear();
      for (let f = 0; f < files.length; f++) {
        source.onFile?.(f, files[f]!);
        const src = openFile(files[f]!);
        try {
          const renumbered = threadMaps[f]!;
          const identity = src.meta.processIdentity;
          const columns = merged.sampleTypes.map((t) =>
            src.meta.sampleTypes.findIndex((u) => sampleTypeName(u) === sampleTypeName(t)),
          );
          const remap = new Remapper(src, target, merged.sampleTypes.length, {
            columns,
            thread: (index) => {
              const t = src.threads[index]!;
              const key = threadKey(t.threadId, t.interpreterId);
              // Files rotated from one process (the same identity) share its threads.
              const sameProcess = identity === undefined ? undefined : `${identity}\u0000${key}`;
              let threadId = sameProcess === undefined ? undefined : processThreads.get(sameProcess);
              if (threadId === undefined) {
                threadId = t.threadId;
                if (claimed.has(key)) {
                  do threadId = ++maxThreadId;
                  while (claimed.has(threadKey(threadId, t.interpreterId)));
                }
                claimed.add(threadKey(threadId, t.interpreterId));
                if (threadId > maxThreadId) maxThreadId = threadId;
                if (sameProcess !== undefined) processThreads.set(sameProcess, threadId);
              }
              renumbered.set(key, threadId);
              return threads.intern(threadId, t.interpreterId, t.name);
            },
          });
          for (const b of src.batches()) yield remap.batch(b);
        } finally {
          src.close();
        }
      }
    },
    close: () => undefined,
  };
  return source;
}
