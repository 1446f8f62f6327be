/**
 * The `samples` and `timeDeltas` lists of a .cpuprofile read twice: counted by the scan's first read
 * (CountedNumbers: where each starts, how many, the ids named and the gaps by value), then read again in order
 * through a window of their own (ListNumbers), so a conversion holds no list of the whole file.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { InputWindow, type InputFile } from '../../input';
import { GrowingFloats } from '../io';
import type { GapCounts } from './median-gap';
import { JsonBytes, NOT_TAKEN, RBRACKET, notTaken } from './json-bytes';

/** A list's items as the scan takes them: kept (GrowingFloats) or counted (CountedNumbers). */
export interface NumberList {
  length: number;
  push(value: number): void;
}

/** Most ids SampledIds keeps a bit for. */
const MAX_SAMPLED_ID = 1 << 24;

/**
 * The distinct node ids a samples list names, one byte each up to MAX_SAMPLED_ID (V8 numbers nodes 1..n); `all`
 * is false once an id is beyond it (then the reader cannot tell which nodes are sampled).
 */
export class SampledIds {
  bits = new Uint8Array(1024);
  all = true;

  add(id: number): void {
    if (!(Number.isInteger(id) && id >= 0 && id < MAX_SAMPLED_ID)) {
      this.all = false;
      return;
    }
    if (id >= this.bits.length) {
      const grown = new Uint8Array(Math.min(MAX_SAMPLED_ID, Math.max(id + 1, this.bits.length * 2)));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[id] = 1;
  }
}

/**
 * A `samples` or `timeDeltas` list counted, not kept: where its first item starts in the file, how many there
 * are, for samples (`ids`) the ids it names, and for timeDeltas (`gaps`) the gaps after the first counted by value
 * and whether all are finite and ≥ 0.
 * A number is taken in only when the next one comes (or at the end): the scan undoes an item the window ends in
 * after its push, by setting `length` back.
 */
export class CountedNumbers implements NumberList {
  /** The file offset of the first item (after "[" and its whitespace). */
  from = 0;
  private taken = 0;
  private held = false;
  private last = 0;
  ordered = true;
  finite = true;

  /** The numbers while there are at most `keep` of them (the held read takes those), then undefined. */
  kept: GrowingFloats | undefined = new GrowingFloats();

  constructor(
    readonly gaps: GapCounts | undefined,
    readonly ids: SampledIds | undefined,
    private readonly keep: number,
  ) {}

  get length(): number {
    return this.kept !== undefined ? this.kept.length : this.taken + (this.held ? 1 : 0);
  }

  set length(n: number) {
    if (this.kept !== undefined) this.kept.length = n;
    else if (n < this.length) this.held = false;
  }

  push(value: number): void {
    if (this.kept !== undefined) {
      this.kept.push(value);
      if (this.kept.length > this.keep) this.count();
      return;
    }
    this.take();
    this.held = true;
    this.last = value;
  }

  /** Counts from here on: the numbers kept so far are taken in, the last one held (an undo may drop it). */
  count(): void {
    const kept = this.kept;
    if (kept === undefined) return;
    this.kept = undefined;
    for (let i = 0; i < kept.length; i++) this.push(kept.data[i]!);
  }

  /** The list is whole: takes in its last number (when counting). */
  end(): void {
    if (this.kept === undefined) this.take();
  }

  private take(): void {
    if (!this.held) return;
    const value = this.last;
    this.held = false;
    this.ids?.add(value);
    if (this.gaps !== undefined) {
      if (!Number.isFinite(value)) this.finite = false;
      else if (value < 0) this.ordered = false;
      else if (this.taken > 0) this.gaps.add(value);
    }
    this.taken++;
  }
}

/** When fewer bytes than this are left in a window before an item, the window moves on first. */
export const SLACK = 1 << 16;

/**
 * The numbers of a list the scan counted (CountedNumbers), read again in order through a window of their own. The
 * scan took every one of them already, so anything else here means the file changed in between.
 */
export class ListNumbers extends JsonBytes {
  private readonly window: InputWindow;
  private left: number;

  constructor(list: CountedNumbers, file: InputFile, windowBytes = 1 << 20) {
    const window = new InputWindow(file, windowBytes, ErrorCode.TACHYON_FILE_CHANGED, list.from);
    super(window.bytes);
    this.window = window;
    this.left = list.length;
  }

  /** The next `count` numbers into `out`: many in one loop while the window cannot end inside one (as the scan). */
  readMany(out: Float64Array, count: number): void {
    let i = 0;
    while (i < count) {
      if (this.p > 0 && this.b.length - this.p < SLACK && !this.window.final) this.moveTo(this.p);
      const stop = this.window.final ? this.b.length : this.b.length - SLACK;
      let at = this.p;
      const before = i;
      try {
        while (i < count && this.p < stop) {
          at = this.p;
          if (this.left === 0) notTaken();
          this.ws();
          const value = this.number();
          if (this.next(RBRACKET) !== (this.left === 1)) notTaken();
          this.left--;
          out[i++] = value;
        }
      } catch (err) {
        if (err !== NOT_TAKEN) throw err;
        this.p = at;
        out[i++] = this.read();
        continue;
      }
      // Exactly SLACK bytes left: one item, which moves the window on.
      if (i === before) out[i++] = this.read();
    }
  }

  read(): number {
    if (this.p > 0 && this.b.length - this.p < SLACK && !this.window.final) this.moveTo(this.p);
    for (;;) {
      const at = this.p;
      try {
        if (this.left === 0) notTaken();
        this.ws();
        const value = this.number();
        if (this.next(RBRACKET) !== (this.left === 1)) notTaken();
        this.left--;
        return value;
      } catch (err) {
        if (err !== NOT_TAKEN) throw err;
        if (this.window.final) throw fileChanged(this.window.offset + at);
        this.moveTo(at);
      }
    }
  }

  private moveTo(at: number): void {
    this.b = this.window.advance(at);
    this.p = 0;
  }
}

function fileChanged(offset: number): ProfpackError {
  return new ProfpackError('the .cpuprofile changed while it was read: a list of numbers is not what it was', {
    code: ErrorCode.TACHYON_FILE_CHANGED,
    offset,
    expected: 'the file as it was when first read',
  });
}
