/**
 * A flat .cpuprofile read straight from its bytes: no UTF-8 text of
 * the whole file and no object per node. A call frame is parsed once per
 * distinct byte sequence (V8 repeats the same callFrame text for every node of
 * a function: 4,345 distinct among 214,366 nodes in the bench's profile), so
 * its strings and model frame are made once.
 *
 * It takes only the shape V8 and DevTools write, and answers undefined for
 * anything else (the nested form, `timestamps`, a repeated key, a value of an
 * unexpected type, a syntax error): the reader then parses the text with
 * JSON.parse, whose path names what is wrong. Every byte it accepts is valid
 * JSON with the value JSON.parse gives it; a repeat of a call frame is
 * byte-identical to one it checked.
 *
 * From a file it reads through a window (InputWindow, 1 MiB to start), never the whole file at once: a node, a
 * number of `samples` or `timeDeltas`, or another top-level member is an item, and an item the window ends in is
 * undone and read again once the window has moved on to its start (or doubled, for an item larger than it).
 */
import { closeInput, InputWindow, openInput, type InputFile } from '../../input';
import { GrowingFloats, GrowingUints } from '../io';
import type { CpuProfileCallFrame, CpuProfileMeta } from '../../v8/index';
import type { CpuColumns, CpuTree } from './cpuprofile-columns';
import { CountedNumbers, SampledIds, SLACK, type NumberList } from './cpuprofile-lists';
import { GapCounts } from './median-gap';
import { JsonBytes, Key, LBRACE, LBRACKET, NOT_TAKEN, QUOTE, RBRACE, RBRACKET, notTaken, parsed } from './json-bytes';
import type { Bytes } from './json-bytes';

/** What Scan.item reads. */
const enum Item {
  member,
  node,
  number,
  end,
}

export function scanCpuProfile(bytes: Bytes): CpuColumns | undefined {
  return scanned(() => new Scan(bytes).columns());
}

/**
 * The scan of a file read through a window of `windowBytes` to start; undefined when the scan does not take it (as
 * scanCpuProfile).
 */
export function scanCpuProfileFile(path: string, windowBytes = 1 << 20): CpuColumns | undefined {
  const file = openInput(path);
  try {
    const window = new InputWindow(file, windowBytes);
    return scanned(() => new Scan(window.bytes, window).columns());
  } finally {
    closeInput(file);
  }
}

/**
 * A flat .cpuprofile scanned for a streamed read: its call tree as columns, and of `samples` and `timeDeltas` only
 * where each list's items start in the file and how many there are (they are read again through windows), with
 * the deltas' gaps counted for the median and whether every delta is finite and ≥ 0 (so samples come in time order).
 */
export interface ScannedLists {
  tree: CpuTree;
  samples: CountedNumbers;
  deltas: CountedNumbers;
}

/**
 * Records a streamed read keeps, as the held read does, rather than read its lists twice: at 1 M records the
 * second read costs more CPU than holding them (bench/RESULTS.md), and 2 M held records are ~110 MB.
 */
export const MAX_KEPT_RECORDS = 1 << 21;

/**
 * The scan of an open file for a streamed read (ScannedLists); the whole columns when neither list has more than
 * `keep` numbers (the held read is then cheaper); undefined when the scan does not take it.
 */
export function scanCpuProfileLists(
  file: InputFile,
  windowBytes = 1 << 20,
  keep = MAX_KEPT_RECORDS,
): ScannedLists | CpuColumns | undefined {
  return scanned(() => {
    const window = new InputWindow(file, windowBytes);
    const scan = new Scan(window.bytes, window, keep);
    const tree = scan.profile();
    const samples = scan.samples as CountedNumbers;
    const deltas = scan.deltas as CountedNumbers;
    if (samples.kept !== undefined && deltas.kept !== undefined)
      return { ...tree, samples: samples.kept.view(), deltas: deltas.kept.view() };
    for (const list of [samples, deltas]) {
      list.count();
      list.end();
    }
    return { tree, samples, deltas };
  });
}

function scanned<T>(scan: () => T): T | undefined {
  try {
    return scan();
  } catch (err) {
    if (err === NOT_TAKEN) return undefined;
    throw err;
  }
}

const FNV_PRIME = 0x01000193;

/**
 * A hash of [from, to]: its length, 16 bytes from the function name's start and the 24 before `to` (the end of
 * the url, line and column): enough to tell call frames apart without reading every byte.
 */
function sampleHash(b: Bytes, from: number, to: number): number {
  let h = Math.imul(0x811c9dc5 ^ (to - from), FNV_PRIME);
  const head = Math.min(to, from + 32);
  for (let i = from + 16; i < head; i++) h = Math.imul(h ^ b[i]!, FNV_PRIME);
  for (let i = Math.max(head, to - 24); i < to; i++) h = Math.imul(h ^ b[i]!, FNV_PRIME);
  return h;
}

class Scan extends JsonBytes {
  // Typed columns, doubled as they fill: no JS array grown in the heap's large-object space (fresh pages each time).
  private readonly ids = new GrowingFloats();
  private readonly frameOf = new GrowingUints();
  private readonly callFrames: CpuProfileCallFrame[] = [];
  private readonly childStart = new GrowingUints();
  private readonly children = new GrowingFloats();
  private lineTicks: Record<number, number[]> | undefined;
  // Distinct call frames by their bytes: an open-addressed table of index + 1, and each one's bytes (a copy: the
  // window moves on) and hash.
  private table = new Int32Array(1024);
  private readonly frameBytes: Buffer[] = [];
  private readonly frameHash: number[] = [];
  samples: NumberList | undefined;
  deltas: NumberList | undefined;
  private startTime: number | undefined;
  private endTime: number | undefined;
  private meta: unknown;
  private nodes = false;
  private seen = 0;
  /** The list member whose items are next (`ids` for `nodes`), if any. */
  private list: NumberList | undefined;

  /** The same bytes as a Buffer, for its ranged compare (memcmp, no view object per node). */
  private buffer: Buffer;

  constructor(
    b: Bytes,
    private readonly window?: InputWindow,
    /** For a streamed read: `samples` and `timeDeltas` counted (CountedNumbers) past this many numbers; -1: kept. */
    private readonly keep = -1,
  ) {
    super(b);
    this.childStart.push(0);
    this.buffer = Buffer.from(b.buffer, b.byteOffset, b.length);
  }

  /** The whole document, its lists kept. */
  columns(): CpuColumns {
    const tree = this.profile();
    return { ...tree, samples: (this.samples as GrowingFloats).view(), deltas: (this.deltas as GrowingFloats).view() };
  }

  /** The whole document: its call tree and scalars; `samples` and `deltas` hold the two lists (kept or counted). */
  profile(): CpuTree {
    this.space();
    if (!this.open(LBRACE, RBRACE))
      do {
        this.item(Item.member);
        // A list's items are items of their own: a window moves within the list, never inside one item.
        if (this.list === this.ids) while (!this.item(Item.node, this.list));
        else if (this.list !== undefined) this.numbers(this.list);
      } while (!this.item(Item.end));
    this.space();
    const { samples, deltas, meta } = this;
    if (!this.final() || this.p !== this.b.length || !this.nodes || samples === undefined || deltas === undefined)
      notTaken();
    if (samples instanceof CountedNumbers) samples.end();
    if (deltas instanceof CountedNumbers) deltas.end();
    return {
      ids: this.ids.view(),
      frameOf: this.frameOf.view(),
      callFrames: this.callFrames,
      childStart: this.childStart.view(),
      children: this.children.view(),
      lineTicks: this.lineTicks,
      startTime: this.startTime,
      endTime: this.endTime,
      meta: meta !== null && typeof meta === 'object' ? (meta as CpuProfileMeta) : undefined,
    };
  }

  private final(): boolean {
    return this.window === undefined || this.window.final;
  }

  /** Whitespace, across windows (outside any item: only at the document's start and end). */
  private space(): void {
    for (this.ws(); this.p === this.b.length && !this.final(); this.ws()) this.moveTo(this.p);
  }

  /**
   * Reads one item: a member (a list member: its key and "["), a list's item and the comma or "]" after it, or the
   * comma or "}" after a member (true: the list or the document ends). When the window ends inside the item and the
   * file goes on, what the item added is undone, the window moves on to the item's start (doubling when it starts
   * there already) and the item is read again.
   */
  private item(kind: Item, list?: NumberList): boolean {
    if (this.p > 0 && this.b.length - this.p < SLACK && !this.final()) this.moveTo(this.p);
    for (;;) {
      const at = this.p;
      const seen = this.seen;
      const nodes = this.ids.length;
      const children = this.children.length;
      const items = list?.length ?? 0;
      try {
        if (kind === Item.member) {
          this.ws();
          this.member();
          return false;
        }
        if (kind === Item.end) return this.next(RBRACE);
        this.ws();
        if (kind === Item.node) this.node();
        else list!.push(this.number());
        return this.next(RBRACKET);
      } catch (err) {
        if (err !== NOT_TAKEN || this.final()) throw err;
        this.seen = seen;
        this.ids.length = nodes;
        this.frameOf.length = nodes;
        this.childStart.length = nodes + 1;
        this.children.length = children;
        if (this.lineTicks !== undefined) delete this.lineTicks[nodes];
        if (list !== undefined) list.length = items;
        this.moveTo(at);
      }
    }
  }

  /**
   * A list's numbers through its "]": many in one loop while the window cannot end inside one (more than SLACK
   * bytes left, or the file's end), one item at a time otherwise (and for the number the loop could not take).
   */
  private numbers(list: NumberList): void {
    for (;;) {
      const stop = this.final() ? this.b.length : this.b.length - SLACK;
      let at = this.p;
      let items = list.length;
      try {
        while (this.p < stop) {
          at = this.p;
          items = list.length;
          this.ws();
          list.push(this.number());
          if (this.next(RBRACKET)) return;
        }
      } catch (err) {
        if (err !== NOT_TAKEN) throw err;
        list.length = items;
        this.p = at;
      }
      if (this.item(Item.number, list)) return;
    }
  }

  private moveTo(at: number): void {
    this.b = this.window!.advance(at);
    this.buffer = Buffer.from(this.b.buffer, this.b.byteOffset, this.b.length);
    this.p = 0;
  }

  /** A top-level key and its value; `nodes`, `samples` and `timeDeltas` as lists of items. */
  /** A top-level key and its value; for `nodes`, `samples` and `timeDeltas` the list's "[", its items left to read. */
  private member(): void {
    const key = this.key();
    if (key !== Key.other) {
      if ((this.seen & (1 << key)) !== 0) notTaken();
      this.seen |= 1 << key;
    }
    this.list = undefined;
    if (key === Key.nodes || key === Key.samples || key === Key.timeDeltas) {
      const list: NumberList =
        key === Key.nodes
          ? this.ids
          : key === Key.samples
            ? (this.samples =
                this.keep >= 0 ? new CountedNumbers(undefined, new SampledIds(), this.keep) : new GrowingFloats())
            : (this.deltas =
                this.keep >= 0 ? new CountedNumbers(new GapCounts(), undefined, this.keep) : new GrowingFloats());
      if (key === Key.nodes) this.nodes = true;
      if (!this.open(LBRACKET, RBRACKET)) this.list = list;
      if (list instanceof CountedNumbers) list.from = this.window!.offset + this.p;
    } else if (key === Key.startTime) this.startTime = this.number();
    else if (key === Key.endTime) this.endTime = this.number();
    else if (key === Key.profpack) {
      const from = this.p;
      this.skipValue();
      this.meta = parsed(this.b, from, this.p);
    } else if (key === Key.head || key === Key.timestamps) notTaken();
    else this.skipValue();
  }

  private node(): void {
    let id: number | undefined;
    let frame = -1;
    let children = false;
    let ticks = false;
    const k = this.ids.length;
    if (!this.open(LBRACE, RBRACE))
      do {
        const key = this.key();
        if (key === Key.id && id === undefined) id = this.number();
        else if (key === Key.callFrame && frame < 0) frame = this.callFrame();
        else if (key === Key.children && !children) {
          if (!this.open(LBRACKET, RBRACKET))
            do {
              this.ws();
              this.children.push(this.number());
            } while (!this.next(RBRACKET));
          children = true;
        } else if (key === Key.positionTicks && !ticks) {
          const flat: number[] = [];
          if (!this.open(LBRACKET, RBRACKET))
            do {
              this.ws();
              this.tick(flat);
            } while (!this.next(RBRACKET));
          if (flat.length > 0) (this.lineTicks ??= {})[k] = flat;
          ticks = true;
        } else if (key === Key.id || key === Key.callFrame || key === Key.children || key === Key.positionTicks)
          notTaken();
        else this.skipValue();
      } while (!this.next(RBRACE));
    if (id === undefined || frame < 0) notTaken();
    this.ids.push(id);
    this.frameOf.push(frame);
    this.childStart.push(this.children.length);
  }

  /** One `{ "line": L, "ticks": T }` of whole numbers (T ≥ 0), onto `flat`. */
  private tick(flat: number[]): void {
    let line: number | undefined;
    let ticks: number | undefined;
    if (!this.open(LBRACE, RBRACE))
      do {
        const key = this.key();
        if (key === Key.line && line === undefined) line = this.number();
        else if (key === Key.ticks && ticks === undefined) ticks = this.number();
        else notTaken();
      } while (!this.next(RBRACE));
    if (line === undefined || ticks === undefined || !Number.isSafeInteger(line) || !Number.isSafeInteger(ticks))
      notTaken();
    if (ticks < 0) notTaken();
    flat.push(line, ticks);
  }

  /**
   * The call frame object here: the index of its distinct bytes. Candidates are found by the bytes up to the
   * first "}" (memchr; a sample of them hashed), and a candidate is this frame only when all of its own bytes,
   * through its real end, are here too: bytes equal to a frame parsed and checked are that frame. Others are
   * parsed, checked and added.
   */
  private callFrame(): number {
    const b = this.b;
    const from = this.p;
    if (b[from] !== LBRACE) notTaken();
    const brace = b.indexOf(RBRACE, from);
    if (brace < 0) notTaken();
    const h = sampleHash(b, from, brace);
    const mask = this.table.length - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const at = this.table[slot]!;
      if (at === 0) break;
      const f = at - 1;
      if (this.frameHash[f] !== h) continue;
      const known = this.frameBytes[f]!;
      if (from + known.length <= b.length && known.compare(this.buffer, from, from + known.length) === 0) {
        this.p = from + known.length;
        return f;
      }
    }
    const cf = this.parseCallFrame();
    const f = this.callFrames.length;
    this.callFrames.push(cf);
    this.frameBytes.push(Buffer.from(b.subarray(from, this.p)));
    this.frameHash.push(h);
    if (2 * this.callFrames.length > this.table.length) {
      this.table = new Int32Array(this.table.length * 2);
      for (let g = 0; g < f; g++) this.place(this.frameHash[g]!, g);
    }
    this.place(h, f);
    return f;
  }

  private place(hash: number, f: number): void {
    const mask = this.table.length - 1;
    let slot = hash & mask;
    while (this.table[slot] !== 0) slot = (slot + 1) & mask;
    this.table[slot] = f + 1;
  }

  /** The fields the reader uses, typed as V8 writes them; any other type is the JSON.parse path's to judge. */
  private parseCallFrame(): CpuProfileCallFrame {
    let functionName: string | undefined;
    let url: string | undefined;
    let scriptId: string | number | undefined;
    let lineNumber: number | undefined;
    let columnNumber: number | undefined;
    if (!this.open(LBRACE, RBRACE))
      do {
        const key = this.key();
        if (key === Key.functionName && functionName === undefined) functionName = this.string();
        else if (key === Key.url && url === undefined) url = this.string();
        else if (key === Key.lineNumber && lineNumber === undefined) lineNumber = this.number();
        else if (key === Key.columnNumber && columnNumber === undefined) columnNumber = this.number();
        else if (key === Key.scriptId && scriptId === undefined)
          scriptId = this.b[this.p] === QUOTE ? this.string() : this.number();
        else notTaken();
      } while (!this.next(RBRACE));
    if (functionName === undefined || url === undefined) notTaken();
    return {
      functionName,
      scriptId: scriptId ?? '0',
      url,
      lineNumber: lineNumber ?? -1,
      columnNumber: columnNumber ?? -1,
    };
  }
}
