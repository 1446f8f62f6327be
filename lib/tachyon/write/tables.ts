/**
 * The writer's string and frame tables: deduplication in first-seen order and
 * their encoded bytes, built incrementally so finalize only appends them
 * (../shared/notes/tachyon-format.md §4). Shared by both backends: interning
 * is a hash lookup that JS does as fast as a round trip through N-API.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { ByteSink } from '../../byte-sink';
import { NO_OPCODE, U32_MAX } from '../format';
import { encodeFrameEntry, encodeStringEntry, endDelta } from '../file/index';
import { resized } from '../../typed-arrays';
import { mix3 } from '../../hash';

function limit(what: string): ProfpackError {
  return new ProfpackError(`the format allows at most ${U32_MAX} ${what}`, {
    code: ErrorCode.TACHYON_WRITE_LIMIT,
    expected: `at most ${U32_MAX} ${what} (indices are u32)`,
  });
}

const encoder = new TextEncoder();
// String.prototype.isWellFormed is in Node 20 but not in the ES2023 lib typings.
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Filenames and function names share one table, deduplicated by string equality. */
export class WriterStringTable {
  private readonly ids = new Map<string, number>();
  private readonly byId: string[] = [];
  readonly encoded = new ByteSink(4096);

  get count(): number {
    return this.ids.size;
  }

  has(id: number): boolean {
    return Number.isInteger(id) && id >= 0 && id < this.ids.size;
  }

  /** The id of `value`, adding it if new. */
  intern(value: string): number {
    const found = this.ids.get(value);
    if (found !== undefined) return found;
    return this.add(value);
  }

  private add(value: string): number {
    if (typeof value !== 'string') {
      throw new ProfpackError(`a filename or function name must be a string, not ${typeof value}`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: 'a string',
      });
    }
    // CPython refuses strings it cannot encode as UTF-8 (lone surrogates); TextEncoder would replace them.
    if (!isWellFormed(value)) {
      throw new ProfpackError('a filename or function name has a lone surrogate and cannot be UTF-8 encoded', {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: 'a well-formed UTF-16 string',
      });
    }
    if (this.ids.size >= U32_MAX) throw limit('strings');
    const utf8 = encoder.encode(value);
    encodeStringEntry(this.encoded, utf8);
    const id = this.ids.size;
    this.ids.set(value, id);
    this.byId.push(value);
    return id;
  }

  /** A point to roll back to (a refused sample leaves no string behind). */
  mark(): { count: number; bytes: number } {
    return { count: this.ids.size, bytes: this.encoded.length };
  }

  rollback(mark: { count: number; bytes: number }): void {
    while (this.byId.length > mark.count) this.ids.delete(this.byId.pop()!);
    this.encoded.length = mark.bytes;
  }
}

/** The 7 fields a frame is deduplicated on, already converted as CPython converts them. */
export interface FrameFields {
  filenameId: number;
  funcnameId: number;
  lineno: number; // int32, -1 = none
  endLineno: number; // int32, -1 = none
  column: number; // int32, -1 = none
  endColumn: number; // int32, -1 = none
  opcode: number; // 0..254, 255 = none
}

const FIELDS = 7;

function frameHash(
  filenameId: number,
  funcnameId: number,
  lineno: number,
  endLineno: number,
  column: number,
  endColumn: number,
  opcode: number,
): number {
  return mix3(mix3(filenameId, funcnameId, lineno), mix3(endLineno, column, endColumn), opcode);
}

/**
 * Frames deduplicated on all 7 fields (CPython 3.15.2 keys on the full tuple,
 * so an end line of -1 and an end line equal to the start are two frames even
 * though they encode the same bytes). Open addressing over an Int32Array.
 */
export class WriterFrameTable {
  private fields = new Int32Array(FIELDS * 1024);
  private slots = new Int32Array(2048).fill(-1);
  private mask = 2047;
  private size = 0;
  readonly encoded = new ByteSink(8192);

  get count(): number {
    return this.size;
  }

  has(id: number): boolean {
    return Number.isInteger(id) && id >= 0 && id < this.size;
  }

  /** The id of the frame, adding it if new. Arguments must already be int32 / 0..255. */
  intern(
    filenameId: number,
    funcnameId: number,
    lineno: number,
    endLineno: number,
    column: number,
    endColumn: number,
    opcode: number,
  ): number {
    const h = frameHash(filenameId, funcnameId, lineno, endLineno, column, endColumn, opcode);
    const f = this.fields;
    let slot = h & this.mask;
    for (;;) {
      const id = this.slots[slot]!;
      if (id < 0) break;
      const o = id * FIELDS;
      if (
        f[o] === filenameId &&
        f[o + 1] === funcnameId &&
        f[o + 2] === lineno &&
        f[o + 3] === endLineno &&
        f[o + 4] === column &&
        f[o + 5] === endColumn &&
        f[o + 6] === opcode
      ) {
        return id;
      }
      slot = (slot + 1) & this.mask;
    }
    if (this.size >= U32_MAX) throw limit('frames');
    const id = this.size++;
    if ((id + 1) * FIELDS > f.length) {
      this.fields = resized(f, f.length * 2);
    }
    const o = id * FIELDS;
    const g = this.fields;
    g[o] = filenameId;
    g[o + 1] = funcnameId;
    g[o + 2] = lineno;
    g[o + 3] = endLineno;
    g[o + 4] = column;
    g[o + 5] = endColumn;
    g[o + 6] = opcode;
    this.slots[slot] = id;
    if (this.size * 2 > this.mask) this.rehash();
    encodeFrameEntry(
      this.encoded,
      filenameId,
      funcnameId,
      lineno,
      endDelta(lineno, endLineno),
      column,
      endDelta(column, endColumn),
      opcode,
    );
    return id;
  }

  mark(): { count: number; bytes: number } {
    return { count: this.size, bytes: this.encoded.length };
  }

  /** Forgets the frames added since `mark` (rare: a refused sample). */
  rollback(mark: { count: number; bytes: number }): void {
    if (this.size === mark.count) return;
    this.size = mark.count;
    this.encoded.length = mark.bytes;
    this.rehash(false);
  }

  private rehash(grow = true): void {
    const capacity = (this.mask + 1) * (grow ? 2 : 1);
    this.slots = new Int32Array(capacity).fill(-1);
    this.mask = capacity - 1;
    const f = this.fields;
    for (let id = 0; id < this.size; id++) {
      const o = id * FIELDS;
      const h = frameHash(f[o]!, f[o + 1]!, f[o + 2]!, f[o + 3]!, f[o + 4]!, f[o + 5]!, f[o + 6]!);
      let slot = h & this.mask;
      while (this.slots[slot]! >= 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = id;
    }
  }
}

/** CPython's conversion of one location element: an int cut to int32, anything else -1. */
export function toInt32Field(value: unknown): number {
  if (typeof value === 'number') return Number.isInteger(value) ? value | 0 : -1;
  if (typeof value === 'bigint') return Number(BigInt.asIntN(32, value));
  return -1;
}

/** CPython keeps an opcode only if it is an int in 0..254 (MAX_REAL_OPCODE); anything else is 255. */
export function toOpcode(value: unknown): number {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value <= 254 ? value : NO_OPCODE;
  if (typeof value === 'bigint') return value >= 0n && value <= 254n ? Number(value) : NO_OPCODE;
  return NO_OPCODE;
}
