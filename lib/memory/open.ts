/**
 * Heap recordings from files: one file, or the rotated files of one process
 * read as one trace (a later file's live-at-start objects are the ones the
 * earlier files left live). The file reader is lib/tachyon's openHeapTrace.
 */
import { ErrorCode, isProfpackError, ProfpackError } from '../errors';
import { detectFormat, openProfile } from '../formats/index';
import { closeInput, openInput, readInput } from '../input';
import {
  FrameTable,
  Remapper,
  StackTable,
  ThreadTable,
  type Frame,
  type ProfileSource,
  type ThreadRef,
} from '../profile/index';
import { hasPlaceholderHeader, heapTraceOfFile } from '../tachyon/index';
import {
  NO_HEAP_STACK,
  type ExternalMemorySample,
  type HeapEventBatch,
  type HeapTraceMeta,
  type HeapTraceSource,
} from '../profile/index';

export interface HeapFilesOptions {
  /**
   * Files a directory walk listed without checking their header (lib/fleet's `unfinished: 'caller'`): one whose
   * writer's header is still open is skipped here, where it is opened anyway, and reported through onUnfinished.
   */
  unchecked?: ReadonlySet<string>;
  /** Called once per reason with the `unchecked` files skipped for it (lib/fleet's warnSkipped is the CLI's). */
  onSkipped?: (reason: 'unfinished' | 'unreadable', paths: readonly string[]) => void;
}

/**
 * The heap trace of one file, or null when it holds no heap events (lib/tachyon's reader; other formats have
 * none). When `unchecked` (a walk found it), 'unfinished' when its writer's header is still open and 'unreadable'
 * when it cannot be opened, as the walk's own check skips them. The file is opened once.
 */
export function openHeapFile(file: string, unchecked: true): HeapTraceSource | null | 'unfinished' | 'unreadable';
export function openHeapFile(file: string, unchecked?: false): HeapTraceSource | null;
export function openHeapFile(file: string, unchecked = false): HeapTraceSource | null | 'unfinished' | 'unreadable' {
  // A file named by the caller that cannot be read (EACCES, EISDIR...) is an ERR_IO, never "no heap events".
  let input: ReturnType<typeof openInput>;
  try {
    input = openInput(file);
  } catch (err) {
    if (unchecked && isProfpackError(err)) return 'unreadable';
    throw err;
  }
  try {
    const head = readInput(input, undefined, 1 << 16);
    if (unchecked && hasPlaceholderHeader(head)) return 'unfinished';
    let format: string;
    try {
      format = detectFormat(head);
    } catch (err) {
      // Not a format profpack reads: it has no heap events; openProfile says what it is not.
      if (isProfpackError(err)) return null;
      throw err;
    }
    return format === 'tachyon' ? heapTraceOfFile(readInput(input, ErrorCode.TACHYON_IO), file) : null;
  } finally {
    closeInput(input);
  }
}

/** The process a file's samples come from (the recorder's identity line), or the file itself when it says none. */
function processOf(file: string, trace: HeapTraceSource): string {
  if (trace.meta.processIdentity !== undefined) return trace.meta.processIdentity;
  const profile = openProfile(file);
  try {
    return profile.meta.processIdentity ?? `file:${file}`;
  } finally {
    profile.close();
  }
}

/**
 * The heap trace of `files` (already listed and sorted by path: rotated files
 * sort by their start), or null when none holds heap events. Files of more
 * than one process are refused: one process's objects are one live set.
 */
export function openHeapFiles(files: readonly string[], options: HeapFilesOptions = {}): HeapTraceSource | null {
  const opened: { file: string; trace: HeapTraceSource }[] = [];
  const skipped = { unfinished: [] as string[], unreadable: [] as string[] };
  for (const file of files) {
    const trace = options.unchecked?.has(file) === true ? openHeapFile(file, true) : openHeapFile(file);
    if (trace === 'unfinished' || trace === 'unreadable') skipped[trace].push(file);
    else if (trace !== null) opened.push({ file, trace });
  }
  for (const reason of ['unfinished', 'unreadable'] as const)
    if (skipped[reason].length > 0) options.onSkipped?.(reason, skipped[reason]);
  if (opened.length === 0) return null;
  if (opened.length === 1) return opened[0]!.trace;
  const processes = new Set(opened.map((o) => processOf(o.file, o.trace)));
  if (processes.size > 1) {
    for (const o of opened) o.trace.close?.();
    throw new ProfpackError(
      `heap questions read one process's recording (its rotated files); ` +
        `these ${opened.length} files come from ${processes.size} processes`,
      {
        code: ErrorCode.INVALID_ARGUMENT,
        expected:
          'one file, or the rotated files of one process ' +
          "(`profpack export` puts many processes' allocations in one table)",
      },
    );
  }
  opened.sort((a, b) => a.trace.meta.startTimeUs - b.trace.meta.startTimeUs);
  return new ConcatenatedHeapTrace(opened.map((o) => o.trace));
}

/** openHeapFiles for a question about the heap: files without heap events are the caller's mistake. */
export function requireHeapFiles(files: readonly string[], options: HeapFilesOptions = {}): HeapTraceSource {
  const trace = openHeapFiles(files, options);
  if (trace === null)
    throw new ProfpackError(
      `${files.length === 1 ? files[0] : `these ${files.length} files`}: no heap events (record with --heap)`,
      {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: 'a recording made with profpack record --heap',
      },
    );
  return trace;
}

/** Traces one after another over one set of tables; threads are the same threads (one process). */
export class ConcatenatedHeapTrace implements HeapTraceSource {
  readonly stacks = new StackTable();
  private readonly frameTable = new FrameTable();
  private readonly threadTable = new ThreadTable();

  constructor(private readonly parts: readonly HeapTraceSource[]) {}

  get frames(): readonly Frame[] {
    return this.frameTable.list;
  }

  get threads(): readonly ThreadRef[] {
    return this.threadTable.list;
  }

  get meta(): HeapTraceMeta {
    const first = this.parts[0]!.meta;
    const last = this.parts[this.parts.length - 1]!.meta;
    return {
      intervalBytes: first.intervalBytes,
      startTimeUs: first.startTimeUs,
      durationUs: last.startTimeUs + last.durationUs - first.startTimeUs,
    };
  }

  *events(): Iterable<HeapEventBatch> {
    const target = {
      stacks: this.stacks,
      internFrame: (f: Frame) => this.frameTable.intern(f),
      internThread: (id: bigint, interpreter?: number, name?: string) => this.threadTable.intern(id, interpreter, name),
      internLabels: () => 0,
    };
    for (const part of this.parts) {
      const tables = {
        frames: part.frames,
        stacks: part.stacks,
        threads: part.threads,
        labelSets: [[]],
      } as unknown as ProfileSource;
      const remap = new Remapper(tables, target, 0);
      const stackIds = (ids: Uint32Array): Uint32Array =>
        ids.map((id) => (id === NO_HEAP_STACK ? id : remap.stack(id)));
      for (const batch of part.events()) {
        const thread = remap.thread(batch.thread);
        if (batch.kind === 'free') yield { ...batch, thread };
        else yield { ...batch, thread, stackIds: stackIds(batch.stackIds) };
      }
    }
  }

  /** Each part's series, its threads numbered as events() numbers them. */
  externalMemory(): ExternalMemorySample[] {
    const out: ExternalMemorySample[] = [];
    for (const part of this.parts) {
      const series = part.externalMemory?.() ?? [];
      for (const m of series) out.push({ ...m, thread: this.threadTable.intern(part.threads[m.thread]!.threadId) });
    }
    return out;
  }

  close(): void {
    for (const part of this.parts) part.close?.();
  }
}
