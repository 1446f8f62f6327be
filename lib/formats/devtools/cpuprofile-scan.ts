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
 */
import { utf8 } from '../io';
import type { CpuProfileCallFrame, CpuProfileMeta } from '../../v8/index';
import type { CpuColumns } from './cpuprofile-columns';

/** Thrown inside the scan for anything it does not take; never escapes scanCpuProfile. */
class NotTaken extends Error {}
const NOT_TAKEN = new NotTaken('not a .cpuprofile the byte scan takes');
type Bytes = Uint8Array;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

/** The keys the scan acts on, matched by their bytes (no string per key); any other is passed over. */
const KEYS = [
  'id',
  'callFrame',
  'hitCount',
  'children',
  'positionTicks',
  'functionName',
  'scriptId',
  'url',
  'lineNumber',
  'columnNumber',
  'line',
  'ticks',
  'nodes',
  'samples',
  'timeDeltas',
  'startTime',
  'endTime',
  '$profpack',
  'head',
  'timestamps',
] as const;
const KEY_BYTES = KEYS.map((k) => Uint8Array.from(k, (c) => c.charCodeAt(0)));
/** KEYS' indices, in the order a node's keys come (the match tries them in turn). */
const enum Key {
  id,
  callFrame,
  hitCount,
  children,
  positionTicks,
  functionName,
  scriptId,
  url,
  lineNumber,
  columnNumber,
  line,
  ticks,
  nodes,
  samples,
  timeDeltas,
  startTime,
  endTime,
  profpack,
  head,
  timestamps,
  other,
}

export function scanCpuProfile(bytes: Bytes): CpuColumns | undefined {
  try {
    return new Scan(bytes).profile();
  } catch (err) {
    if (err === NOT_TAKEN) return undefined;
    throw err;
  }
}

function notTaken(): never {
  throw NOT_TAKEN;
}

/** JSON.parse of a value's bytes (an escaped string, `$profpack`); text it refuses is not taken. */
function parsed(b: Bytes, from: number, to: number): unknown {
  try {
    return JSON.parse(utf8(b, from, to));
  } catch {
    return notTaken();
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

class Scan {
  p = 0;
  private readonly ids: number[] = [];
  private readonly frameOf: number[] = [];
  private readonly callFrames: CpuProfileCallFrame[] = [];
  private readonly childStart: number[] = [0];
  private readonly children: number[] = [];
  private lineTicks: Record<number, number[]> | undefined;
  // Distinct call frames by their bytes: an open-addressed table of index + 1, and each one's byte range and hash.
  private table = new Int32Array(1024);
  private readonly frameFrom: number[] = [];
  private readonly frameTo: number[] = [];
  private readonly frameHash: number[] = [];

  /** The same bytes as a Buffer, for its ranged compare (memcmp, no view object per node). */
  private readonly buffer: Buffer;

  constructor(private readonly b: Bytes) {
    this.buffer = Buffer.from(b.buffer, b.byteOffset, b.length);
  }

  profile(): CpuColumns {
    let nodes = false;
    let samples: number[] | undefined;
    let deltas: number[] | undefined;
    let startTime: number | undefined;
    let endTime: number | undefined;
    let meta: unknown;
    let seen = 0;
    this.ws();
    if (!this.open(LBRACE, RBRACE))
      do {
        const key = this.key();
        if (key !== Key.other) {
          if ((seen & (1 << key)) !== 0) notTaken();
          seen |= 1 << key;
        }
        if (key === Key.nodes) {
          if (!this.open(LBRACKET, RBRACKET))
            do {
              this.ws();
              this.node();
            } while (!this.next(RBRACKET));
          nodes = true;
        } else if (key === Key.samples) samples = this.numbers();
        else if (key === Key.timeDeltas) deltas = this.numbers();
        else if (key === Key.startTime) startTime = this.number();
        else if (key === Key.endTime) endTime = this.number();
        else if (key === Key.profpack) {
          const from = this.p;
          this.skipValue();
          meta = parsed(this.b, from, this.p);
        } else if (key === Key.head || key === Key.timestamps) notTaken();
        else this.skipValue();
      } while (!this.next(RBRACE));
    this.ws();
    if (this.p !== this.b.length || !nodes || samples === undefined || deltas === undefined) notTaken();
    return {
      ids: this.ids,
      frameOf: this.frameOf,
      callFrames: this.callFrames,
      childStart: this.childStart,
      children: this.children,
      lineTicks: this.lineTicks,
      samples,
      deltas,
      startTime,
      endTime,
      meta: meta !== null && typeof meta === 'object' ? (meta as CpuProfileMeta) : undefined,
    };
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
      const start = this.frameFrom[f]!;
      const length = this.frameTo[f]! - start;
      if (
        from + length <= b.length &&
        this.buffer.compare(this.buffer, start, start + length, from, from + length) === 0
      ) {
        this.p = from + length;
        return f;
      }
    }
    const cf = this.parseCallFrame();
    const f = this.callFrames.length;
    this.callFrames.push(cf);
    this.frameFrom.push(from);
    this.frameTo.push(this.p);
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

  /** `o` and the whitespace after it; true when `close` follows at once (an empty object or array, read). */
  private open(o: number, close: number): boolean {
    if (this.b[this.p] !== o) notTaken();
    this.p++;
    this.ws();
    if (this.b[this.p] !== close) return false;
    this.p++;
    return true;
  }

  /** After a member or item: true at `close` (read), false at a comma; anything else is not taken. */
  private next(close: number): boolean {
    this.ws();
    const c = this.b[this.p++];
    if (c === close) return true;
    if (c !== COMMA) notTaken();
    this.ws();
    return false;
  }

  private numbers(): number[] {
    const out: number[] = [];
    if (!this.open(LBRACKET, RBRACKET))
      do {
        this.ws();
        out.push(this.number());
      } while (!this.next(RBRACKET));
    return out;
  }

  /** A key and its colon, as one of KEYS or Key.other; keys with escapes or beyond ASCII are not taken. */
  private key(): Key {
    const b = this.b;
    if (b[this.p] !== QUOTE) notTaken();
    const from = ++this.p;
    for (;;) {
      const c = b[this.p];
      if (c === QUOTE) break;
      if (c === undefined || c === BACKSLASH || c < 0x20 || c >= 0x80) notTaken();
      this.p++;
    }
    const length = this.p - from;
    this.p++;
    let key = Key.other;
    for (let k = 0; k < KEY_BYTES.length && key === Key.other; k++) {
      const want = KEY_BYTES[k]!;
      if (want.length !== length) continue;
      let j = 0;
      while (j < length && b[from + j] === want[j]) j++;
      if (j === length) key = k;
    }
    this.ws();
    if (b[this.p] !== COLON) notTaken();
    this.p++;
    this.ws();
    return key;
  }

  /** A string value: ASCII without escapes as is, anything else as JSON.parse reads its text. */
  private string(): string {
    const b = this.b;
    const from = this.p;
    if (b[from] !== QUOTE) notTaken();
    this.p++;
    let plain = true;
    for (;;) {
      const c = b[this.p++];
      if (c === QUOTE) break;
      if (c === undefined || c < 0x20) notTaken();
      if (c === BACKSLASH) {
        plain = false;
        this.p++;
      } else if (c >= 0x80) plain = false;
    }
    if (plain) return utf8(b, from + 1, this.p - 1);
    const value = parsed(b, from, this.p);
    return typeof value === 'string' ? value : notTaken();
  }

  /** A JSON number, with the value JSON.parse gives it (Number of its text past 15 digits or with a fraction). */
  private number(): number {
    const b = this.b;
    const from = this.p;
    if (b[this.p] === 0x2d) this.p++;
    const first = this.p;
    let v = 0;
    for (let c = b[this.p]!; c >= 0x30 && c <= 0x39; c = b[++this.p]!) v = v * 10 + (c - 0x30);
    const digits = this.p - first;
    if (digits === 0 || (digits > 1 && b[first] === 0x30)) notTaken();
    let exact = digits <= 15;
    if (b[this.p] === 0x2e) {
      this.p++;
      if (!this.digits()) notTaken();
      exact = false;
    }
    if (b[this.p] === 0x65 || b[this.p] === 0x45) {
      this.p++;
      if (b[this.p] === 0x2b || b[this.p] === 0x2d) this.p++;
      if (!this.digits()) notTaken();
      exact = false;
    }
    if (!exact) return Number(utf8(b, from, this.p));
    return first === from ? v : -v;
  }

  private digits(): boolean {
    const start = this.p;
    while (this.b[this.p]! >= 0x30 && this.b[this.p]! <= 0x39) this.p++;
    return this.p > start;
  }

  /** Any JSON value, checked and passed over. */
  private skipValue(): void {
    const c = this.b[this.p];
    if (c === QUOTE) this.string();
    else if (c === LBRACE) {
      if (!this.open(LBRACE, RBRACE))
        do {
          // Any key (escapes, beyond ASCII): nothing here is acted on.
          this.string();
          this.ws();
          if (this.b[this.p++] !== COLON) notTaken();
          this.ws();
          this.skipValue();
        } while (!this.next(RBRACE));
    } else if (c === LBRACKET) {
      if (!this.open(LBRACKET, RBRACKET))
        do {
          this.ws();
          this.skipValue();
        } while (!this.next(RBRACKET));
    } else if (c === 0x74) this.word('true');
    else if (c === 0x66) this.word('false');
    else if (c === 0x6e) this.word('null');
    else this.number();
  }

  private word(w: string): void {
    for (let i = 0; i < w.length; i++) if (this.b[this.p++] !== w.charCodeAt(i)) notTaken();
  }

  private ws(): void {
    const b = this.b;
    for (;;) {
      const c = b[this.p];
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.p++;
    }
  }
}
