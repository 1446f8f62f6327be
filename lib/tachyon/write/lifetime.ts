/**
 * What a ProfileWriter holds past its calls (docs/reliability.md): the
 * descriptor given back when a writer is dropped, the recovery journal
 * (`<path>.journal`, file/journal.ts) kept at each flush, and the
 * flushIntervalMs timer that flushes it.
 */
import * as fs from 'node:fs';
import { JOURNAL_SUFFIX, JournalWriter, type JournalHeader } from '../file/index';
import { invalid } from './arguments';
import type { ProfileWriterOptions, WriterState } from './types';

// Node 20 has Symbol.dispose/asyncDispose; define them (as Node's own polyfill does) where missing.
if (typeof Symbol.dispose !== 'symbol') Object.defineProperty(Symbol, 'dispose', { value: Symbol.for('nodejs.dispose') });
if (typeof Symbol.asyncDispose !== 'symbol') Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('nodejs.asyncDispose') });

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
    throw invalid(`flushIntervalMs must be a whole number of milliseconds >= 1, got ${String(ms)}`, 'an integer in [1, 2^31)');
  }
  if (options.journal !== undefined && typeof options.journal !== 'boolean') throw invalid('journal must be a boolean', 'true | false');
}

/** The part of a writer the timer calls. */
interface Flushable {
  readonly state: WriterState;
  flush(): number;
}

/** The journal (version 1, on disk, unless `journal: false`) and the flush timer of one writer. */
export class Keeper {
  readonly journal: JournalWriter | null;
  private timer: NodeJS.Timeout | undefined;

  constructor(writer: Flushable, path: string, options: ProfileWriterOptions, journaled: boolean, header: JournalHeader) {
    this.journal = journaled && options.journal !== false ? new JournalWriter(path + JOURNAL_SUFFIX, header) : null;
    const ms = options.flushIntervalMs;
    if (ms === undefined) return;
    // The timer holds the writer weakly: a dropped writer is still collected, and its timer then ends.
    const self = new WeakRef(writer);
    const timer = setInterval(() => {
      const w = self.deref();
      if (w === undefined || w.state !== 'open') return this.stop();
      try {
        w.flush();
      } catch {
        // The writer is broken now; its next call reports the cause.
        this.stop();
      }
    }, ms);
    timer.unref();
    this.timer = timer;
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The end of the writer's life: the journal goes (finalized, or a deliberate discard) or stays (after a write error, for recover()). */
  end(keepJournal: boolean): void {
    this.stop();
    if (keepJournal) this.journal?.keep();
    else this.journal?.remove();
  }
}
