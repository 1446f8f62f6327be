/**
 * JSON read straight from its bytes, for the .cpuprofile byte scan (cpuprofile-scan.ts): whitespace, punctuation,
 * keys matched by their bytes, strings, numbers with the value JSON.parse gives them, and any value passed over.
 * Anything it does not take (escaped keys, a syntax error, bytes past the end) throws NOT_TAKEN, which never
 * escapes the scan: the reader then goes the way of JSON.parse, whose path names what is wrong.
 */
import { utf8 } from '../io';

/** Thrown inside the scan for anything it does not take; never escapes scanCpuProfile. */
class NotTaken extends Error {}
export const NOT_TAKEN = new NotTaken('not a .cpuprofile the byte scan takes');
export type Bytes = Uint8Array;

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const LBRACE = 0x7b;
export const RBRACE = 0x7d;
export const LBRACKET = 0x5b;
export const RBRACKET = 0x5d;

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
export const enum Key {
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

export function notTaken(): never {
  throw NOT_TAKEN;
}

/** JSON.parse of a value's bytes (an escaped string, `$profpack`); text it refuses is not taken. */
export function parsed(b: Bytes, from: number, to: number): unknown {
  try {
    return JSON.parse(utf8(b, from, to));
  } catch {
    return notTaken();
  }
}

/** A position in bytes and the JSON read there. */
export class JsonBytes {
  p = 0;

  constructor(protected b: Bytes) {}

  /** `o` and the whitespace after it; true when `close` follows at once (an empty object or array, read). */
  protected open(o: number, close: number): boolean {
    if (this.b[this.p] !== o) notTaken();
    this.p++;
    this.ws();
    if (this.b[this.p] !== close) return false;
    this.p++;
    return true;
  }

  /** After a member or item: true at `close` (read), false at a comma; anything else is not taken. */
  protected next(close: number): boolean {
    this.ws();
    const c = this.b[this.p++];
    if (c === close) return true;
    if (c !== COMMA) notTaken();
    this.ws();
    return false;
  }

  /** A key and its colon, as one of KEYS or Key.other; keys with escapes or beyond ASCII are not taken. */
  protected key(): Key {
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
  protected string(): string {
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
  protected number(): number {
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

  protected digits(): boolean {
    const start = this.p;
    while (this.b[this.p]! >= 0x30 && this.b[this.p]! <= 0x39) this.p++;
    return this.p > start;
  }

  /** Any JSON value, checked and passed over. */
  protected skipValue(): void {
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

  protected word(w: string): void {
    for (let i = 0; i < w.length; i++) if (this.b[this.p++] !== w.charCodeAt(i)) notTaken();
  }

  protected ws(): void {
    const b = this.b;
    for (;;) {
      const c = b[this.p];
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.p++;
    }
  }
}
