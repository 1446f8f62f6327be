/**
 * What a ProfileWriter holds past its calls (docs/reliability.md): the
 * descriptor given back when a writer is dropped, the recovery journal
 * (`<path>.journal`, file/journal.ts) kept at each flush, and the
 * flushIntervalMs timer that flushes it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { ErrorCode, ProfpackError } from '../../errors';
import { JOURNAL_SUFFIX, JournalWriter, encodeV2WriterState, ioError, type JournalHeader } from '../file/index';
import { invalid } from './arguments';
import { Counter, type SampleEngine } from './engines/index';
import type { HeapFileSink } from './heap-sink';
import type { WriterFrameTable, WriterStringTable } from './tables';
import { v2TablesLevel, type WriterInternals } from './trailer';
import type { ProfileWriterOptions, WriterState } from './types';

// Node 20 has Symbol.dispose/asyncDispose; define them (as Node's own polyfill does) where missing.
if (typeof Symbol.dispose !== 'symbol')
  Object.defineProperty(Symbol, 'dispose', { value: Symbol.for('nodejs.dispose') });
if (typeof Symbol.asyncDispose !== 'symbol')
  Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('nodejs.asyncDispose') });

/** A writer dropped without finalize() or close() still gives its descriptor back (its buffered samples are lost). */
export const abandoned = new FinalizationRegistry<number>((fd) => {
  try {
    fs.closeSync(fd);
  } catch {
    // already closed
  }
});

/** flushIntervalMs and journal, checked as the other options are. */
export function checkKeeperOptions(options: ProfileWriterOptions): void {
  const ms = options.flushIntervalMs;
  if (ms !== undefined && !(Number.isInteger(ms) && ms >= 1 && ms <= 2 ** 31 - 1)) {
    throw invalid(
      `flushIntervalMs must be a whole number of milliseconds >= 1, got ${String(ms)}`,
      'an integer in [1, 2^31)',
    );
  }
  if (options.journal !== undefined && typeof options.journal !== 'boolean')
    throw invalid('journal must be a boolean', 'true | false');
}

/** The part of a writer the timer calls. */
interface Flushable {
  readonly state: WriterState;
  flush(): number;
}

/**
 * One tick of a periodic flush (the flushIntervalMs timer, or a caller's own: the recorder's inline writer). False
 * once the ticks should end: the writer is gone, finished, or broken by this flush (its next call reports the cause).
 */
export function flushTick(writer: Flushable | undefined): boolean {
  if (writer === undefined || writer.state !== 'open') return false;
  try {
    writer.flush();
    return true;
  } catch {
    return false;
  }
}

/** The journal (on disk, unless `journal: false`) and the flush timer of one writer. */
export class Keeper {
  readonly journal: JournalWriter | null;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    writer: Flushable,
    path: string,
    options: ProfileWriterOptions,
    journaled: boolean,
    header: JournalHeader,
  ) {
    this.journal = journaled && options.journal !== false ? new JournalWriter(path + JOURNAL_SUFFIX, header) : null;
    const ms = options.flushIntervalMs;
    if (ms === undefined) return;
    // The timer holds the writer weakly: a dropped writer is still collected, and its timer then ends.
    const self = new WeakRef(writer);
    const timer = setInterval(() => {
      if (!flushTick(self.deref())) this.stop();
    }, ms);
    timer.unref();
    this.timer = timer;
  }

  /**
   * After flush() put the samples on disk: one journal checkpoint of what
   * finalize needs besides them. Version 1: the held-back REPEAT runs;
   * version 2: the counts, the table coding, the heap header and chunks.
   */
  checkpoint(
    engine: SampleEngine,
    strings: WriterStringTable,
    frames: WriterFrameTable,
    v2: { heap: HeapFileSink | null; internals: WriterInternals; compression: 'zstd' | 'none' } | null,
  ): void {
    if (this.journal === null) return;
    const c = engine.counters();
    const held =
      v2 === null
        ? engine.pendingRepeats!()
        : encodeV2WriterState({
            samples: c[Counter.totalSamples]!,
            threads: c[Counter.threadCount]!,
            tablesLevel: v2TablesLevel(v2.internals, v2.compression),
            frameTable: v2.internals.frameTable ?? 'columns',
            heapHeader: v2.heap?.headerBytes() ?? null,
          });
    this.journal.checkpoint(
      c[Counter.bytesWritten]!,
      c[Counter.totalSamples]!,
      strings.count,
      strings.encoded.view(),
      frames.count,
      frames.encoded.view(),
      held,
      v2 === null ? undefined : (v2.heap?.storedChunks ?? []),
    );
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * The end of the writer's life: the journal goes (finalized, or a deliberate discard) or stays (after a write error,
   * for recover()).
   */
  end(keepJournal: boolean): void {
    this.stop();
    if (keepJournal) this.journal?.keep();
    else this.journal?.remove();
  }
}

/** The lock file beside a profile: `<path>.lock`. */
export const LOCK_SUFFIX = '.lock';

/** A process that holds a lock: alive when signal 0 reaches it (EPERM: alive, someone else's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** An empty or garbled lock this old (ms since its last change) is taken over: docs/writer.md. */
export const GARBLED_LOCK_STALE_MS = 10_000;

/** Ms since the lock file last changed; 0 when it cannot be told (it is then not stale yet). */
function lockAgeMs(lockPath: string): number {
  try {
    return Math.max(0, Date.now() - fs.statSync(lockPath).mtimeMs);
  } catch {
    return 0;
  }
}

/** Locks whose writer was collected without finalize() or close(): the lock goes with it. */
const abandonedLocks = new FinalizationRegistry<string>((lockPath) => removeLock(lockPath));

function removeLock(lockPath: string): void {
  try {
    fs.unlinkSync(lockPath);
  } catch {
    // gone already
  }
}

/**
 * One writer per path (two writers on one path both finalized,
 * leaving an unreadable file and one deleting the other's journal). The lock
 * is `<path>.lock`, created with O_EXCL and holding "pid host": plain files
 * work on both backends without native code, and over NFS where flock() may
 * not; the file also tells a person who holds the path. A lock whose process
 * is gone on this host (SIGKILL, a crash) is stale and taken over, and so is
 * an empty or garbled one older than GARBLED_LOCK_STALE_MS. The lock
 * also covers the journal (`<path>.journal`), which only the holder writes.
 */
export class WriterLock {
  private held: string | null = null;

  /**
   * Takes the lock of `path`, or throws ERR_TACHYON_LOCKED; no lock for a device or FIFO target, or where none can be
   * made (EACCES, EROFS).
   */
  constructor(owner: object, path: string) {
    try {
      const st = fs.statSync(path);
      if (!st.isFile()) return;
    } catch {
      // missing: the writer creates it
    }
    const lockPath = path + LOCK_SUFFIX;
    const mine = `${process.pid} ${os.hostname()}\n`;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = fs.openSync(lockPath, 'wx', 0o644);
        try {
          fs.writeSync(fd, mine);
        } catch (err) {
          // A full disk: an empty lock would name no holder, and lock the path for good.
          fs.closeSync(fd);
          removeLock(lockPath);
          throw err;
        }
        fs.closeSync(fd);
        this.held = lockPath;
        abandonedLocks.register(owner, lockPath, this);
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST') return; // EACCES, EROFS, ENOENT…: opening the profile itself reports what is wrong
      }
      let holder: string;
      try {
        holder = fs.readFileSync(lockPath, 'utf8');
      } catch {
        continue; // removed meanwhile: try again
      }
      const [pidText, host] = holder.trim().split(' ');
      const pid = Number(pidText);
      const readable = /^[1-9][0-9]*$/.test(pidText ?? '') && Number.isSafeInteger(pid) && (host ?? '') !== '';
      // An empty or garbled lock names no holder to ask: its maker died between creating and writing it (or
      // something else wrote it). A writer writes its line right after creating the file, so one that old is stale.
      const stale = readable ? host === os.hostname() && !alive(pid) : lockAgeMs(lockPath) >= GARBLED_LOCK_STALE_MS;
      if (!stale) {
        throw new ProfpackError(
          `${path} is being written by another ProfileWriter ` +
            `(process ${pidText || '?'} on ${host || '?'}, lock ${lockPath})`,
          {
            code: ErrorCode.TACHYON_LOCKED,
            expected: `no other writer on ${path} (remove ${lockPath} if its writer is gone)`,
            details: { path, lockPath, pid: Number.isSafeInteger(pid) ? pid : null, host: host ?? null },
          },
        );
      }
      removeLock(lockPath);
    }
  }

  /** Gives the lock back (finalize, close). */
  release(): void {
    if (this.held === null) return;
    abandonedLocks.unregister(this);
    removeLock(this.held);
    this.held = null;
  }
}

/** Takes the path's lock, then opens (truncates) it for writing: a second writer is refused before anything is lost. */
export function openLocked(owner: object, path: string): [number, WriterLock] {
  const lock = new WriterLock(owner, path);
  try {
    return [fs.openSync(path, 'w'), lock];
  } catch (err) {
    lock.release();
    throw ioError(err, `opening ${path}`);
  }
}
