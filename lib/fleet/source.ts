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
import { readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { formatFromPath, openProfile } from '../convert/convert';
import { frameKey, threadKey, type Frame, type ProfileMeta, type ProfileSource, type Sample } from '../convert/model';
import { ErrorCode, ProfpackError } from '../errors';
import { fsError } from '../input';

/**
 * The profile files named by `inputs`: files as given, directories expanded
 * (recursively, sorted by path) to the files whose name says they are profiles
 * (`.tach`, `.bin`, `.pb.gz`, `.cpuprofile`, ...).
 */
export function listProfileFiles(inputs: readonly string[]): string[] {
  if (inputs.length === 0) throw new ProfpackError('no profile files given', { code: ErrorCode.FLEET_NO_INPUT, expected: 'one or more files or directories' });
  const files: string[] = [];
  for (const input of inputs) {
    let isDir: boolean;
    try {
      isDir = statSync(input).isDirectory();
    } catch (err) {
      throw fsError(err, input, 'read', ErrorCode.FLEET_NO_INPUT); // the path and the OS code in details, as lib/input.ts reports
    }
    if (!isDir) {
      files.push(input);
      continue;
    }
    const found = (readdirSync(input, { recursive: true }) as string[])
      .filter((name) => formatFromPath(name) !== undefined)
      .map((name) => path.join(input, name))
      .filter((p) => statSync(p).isFile())
      .sort();
    if (found.length === 0) throw new ProfpackError(`${input} holds no profile files`, { code: ErrorCode.FLEET_NO_INPUT, expected: 'files named *.tach, *.bin, *.pb.gz, *.cpuprofile, ...' });
    files.push(...found);
  }
  return files;
}

/** A Tachyon file by its name is opened without reading it whole to sniff its format. */
function openFile(file: string): ReturnType<typeof openProfile> {
  return openProfile(file, formatFromPath(file) === 'tachyon' ? 'tachyon' : undefined);
}

export interface FleetSource extends ProfileSource {
  /** The files, in the order their samples are read. */
  readonly files: readonly string[];
  /**
   * Per file, its threads as renumbered (original "ID[@INTERP]" → the id the
   * merged stream uses); filled while samples() reads the file.
   */
  readonly threadMaps: ReadonlyMap<string, bigint>[];
  /** Called before each file's samples are read (index, path). */
  onFile?: (index: number, file: string) => void;
  close(): void;
}

/**
 * Opens `inputs` (files and directories) as one source. `meta.startTimeUs` is
 * the earliest file's start (asking for it opens every file once);
 * `meta.sampleIntervalUs` is the first file's.
 */
export function openProfiles(inputs: readonly string[]): FleetSource {
  const files = listProfileFiles(inputs);
  const frames: Frame[] = [];
  const frameIds = new Map<string, number>();
  const claimed = new Set<string>();
  /** Files of one recorded process (rotated) share threads: "identity\0thread key" → merged id. */
  const processThreads = new Map<string, bigint>();
  /** The merged threads' names, filled as samples() meets them. */
  const threadNames = new Map<string, string>();
  let maxThreadId = -1n;
  const threadMaps: Map<string, bigint>[] = files.map(() => new Map());
  let meta: ProfileMeta | undefined;
  let sampleCount: number | undefined;
  const scanHeaders = (): void => {
    let start: bigint | undefined;
    let interval: bigint | undefined;
    let count = 0;
    for (const file of files) {
      const src = openFile(file);
      try {
        if (start === undefined || src.meta.startTimeUs < start) start = src.meta.startTimeUs;
        interval ??= src.meta.sampleIntervalUs;
        count = src.sampleCount === undefined || Number.isNaN(count) ? NaN : count + src.sampleCount;
      } finally {
        src.close();
      }
    }
    meta = { startTimeUs: start ?? 0n, sampleIntervalUs: interval ?? 1000n, threadNames };
    sampleCount = Number.isNaN(count) ? undefined : count;
  };

  const source: FleetSource = {
    files,
    threadMaps,
    get meta() {
      if (meta === undefined) scanHeaders();
      return meta!;
    },
    get sampleCount() {
      return sampleCount;
    },
    frames,
    *samples(): Generator<Sample> {
      // Renumbering starts afresh: a second pass gives the same ids as the first.
      claimed.clear();
      processThreads.clear();
      threadNames.clear();
      maxThreadId = -1n;
      for (const m of threadMaps) m.clear();
      for (let f = 0; f < files.length; f++) {
        source.onFile?.(f, files[f]!);
        const src = openFile(files[f]!);
        try {
          const threads = threadMaps[f]!;
          const identity = src.meta.processIdentity;
          const remap: number[] = [];
          for (const s of src.samples()) {
            const key = threadKey(s.threadId, s.interpreterId);
            let threadId = threads.get(key);
            if (threadId === undefined) {
              const sameProcess = identity === undefined ? undefined : `${identity}\u0000${key}`;
              threadId = sameProcess === undefined ? undefined : processThreads.get(sameProcess);
              if (threadId === undefined) {
                threadId = s.threadId;
                if (claimed.has(key)) {
                  do threadId = ++maxThreadId;
                  while (claimed.has(threadKey(threadId, s.interpreterId)));
                }
                claimed.add(threadKey(threadId, s.interpreterId));
                if (threadId > maxThreadId) maxThreadId = threadId;
                if (sameProcess !== undefined) processThreads.set(sameProcess, threadId);
                const name = src.meta.threadNames?.get(key);
                if (name !== undefined) threadNames.set(threadKey(threadId, s.interpreterId), name);
              }
              threads.set(key, threadId);
            }
            const depth = s.stack.length;
            const stack = new Uint32Array(depth);
            for (let i = 0; i < depth; i++) {
              const from = s.stack[i]!;
              let to = remap[from];
              if (to === undefined) {
                const frame = src.frames[from]!;
                const k = frameKey(frame);
                to = frameIds.get(k);
                if (to === undefined) {
                  to = frames.length;
                  frames.push(frame);
                  frameIds.set(k, to);
                }
                remap[from] = to;
              }
              stack[i] = to;
            }
            yield { threadId, interpreterId: s.interpreterId, timestampUs: s.timestampUs, status: s.status, stack };
          }
        } finally {
          src.close();
        }
      }
    },
    close: () => undefined,
  };
  return source;
}
