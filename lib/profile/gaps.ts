/**
 * Real time for tick streams: a sample of a sampling profiler stands for the
 * time until its thread's next sample (as DevTools and speedscope weigh a
 * .cpuprofile), not for the nominal interval: a 32-s recording whose sampler
 * managed 200 samples a second still totals 32 s. A thread's last sample
 * weighs the nominal interval (or, with none, its thread's previous gap).
 */

/** Fills `out[i]` with the gap after row i to the next row of the same thread, in ns (times in µs). */
export function gapsToNext(
  thread: ArrayLike<number>,
  timeUs: ArrayLike<number>,
  length: number,
  nominalUs: number,
  out: Float64Array,
): void {
  const next = new Map<number, number>();
  const lastGap = new Map<number, number>();
  for (let i = length - 1; i >= 0; i--) {
    const t = thread[i]!;
    const j = next.get(t);
    const now = timeUs[i]!;
    let gap: number;
    if (j === undefined) gap = nominalUs > 0 ? nominalUs : NaN;
    else gap = Math.max(0, timeUs[j]! - now);
    out[i] = gap * 1000;
    // Walking backwards, the first gap seen for a thread is its last one.
    if (j !== undefined && !lastGap.has(t)) lastGap.set(t, gap);
    next.set(t, i);
  }
  if (nominalUs > 0) return;
  // No nominal interval: a thread's last sample weighs the gap before it (0 for a lone sample).
  for (let i = 0; i < length; i++) if (Number.isNaN(out[i]!)) out[i] = (lastGap.get(thread[i]!) ?? 0) * 1000;
}

/**
 * The streaming form, for sources read once in order (a Tachyon replay): a
 * row is held back until its thread's next row arrives, then handed to
 * `emit` with its gap. `flush` ends the stream. Rows of one thread keep their
 * order; rows of different threads may come out in another interleaving.
 */
export class GapWeigher<Row> {
  private readonly pending = new Map<number, { row: Row; timeUs: number }>();
  private readonly lastGap = new Map<number, number>();

  constructor(
    private readonly nominalUs: number,
    private readonly emit: (row: Row, gapNs: number) => void,
  ) {}

  push(thread: number, timeUs: number, row: Row): void {
    const held = this.pending.get(thread);
    if (held !== undefined) {
      const gap = Math.max(0, timeUs - held.timeUs);
      this.lastGap.set(thread, gap);
      this.emit(held.row, gap * 1000);
      held.row = row;
      held.timeUs = timeUs;
    } else this.pending.set(thread, { row, timeUs });
  }

  flush(): void {
    for (const [thread, held] of this.pending)
      this.emit(held.row, (this.nominalUs > 0 ? this.nominalUs : (this.lastGap.get(thread) ?? 0)) * 1000);
    this.pending.clear();
  }
}
