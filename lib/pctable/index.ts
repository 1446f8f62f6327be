/**
 * Go pcvalue tables: the Go 1.21 varint-delta encoding (decode, runtime-rule
 * lookup) and the "linear index" encoding of seed 000 (encode byte-exact with
 * the reference, validate, point lookups, batches that cross N-API once).
 */
import { ErrorCode, ProfpackError, invalidArgument } from '../errors';
import { MAX_QUANTUM, type IndexWidth, type VarintRun } from './format';
import * as js from './js';
import { pctableNative } from './native';

export { type IndexWidth, type VarintRun } from './format';

/** Opaque to this file: a C++ table or set under the addon, the JS view or set under the twin. */
type Handle = unknown;
type SetHandle = unknown;
interface Impl {
  decodeVarint(bytes: Uint8Array, quantum: number): js.DecodedRuns;
  fromVarint(bytes: Uint8Array, quantum: number, expectedSize: number): js.FromVarintResult<Handle>;
  fromLinear(bytes: Uint8Array, size: number, quantum: number): Handle;
  lookupMany(handle: Handle, pcs: Uint32Array, out: Int32Array, fillOutside: boolean, outsideValue: number): number;
  openSet(handles: Handle[]): SetHandle;
  setLookupMany(
    set: SetHandle,
    t: Uint32Array,
    pcs: Uint32Array,
    out: Int32Array,
    fill: boolean,
    outside: number,
    varint: boolean,
  ): number;
}
const impl = (pctableNative ?? js) as Impl;

/** runtime.pcvalue's answer: the value and its run (the runtime returns the start PC too). */
export type VarintHit = VarintRun;

export interface PcTableOptions {
  /** Bytes of PCs the table covers (func_.Size). Required for fromLinear; checked against the runs for fromVarint. */
  size?: number;
  /** PC quantum (pcHeader.minLC): 1 on amd64/386, 4 on arm64 and most RISC targets. Default 1. */
  quantum?: number;
}

export interface LookupManyOptions {
  /** Value written for PCs outside their table; without it such a PC throws ERR_PCTABLE_PC_OUT_OF_RANGE. */
  outside?: number;
  /** Reuse this array for the results (at least as long as pcs). */
  out?: Int32Array;
}

function checkBytes(bytes: unknown): asserts bytes is Uint8Array {
  if (!(bytes instanceof Uint8Array)) throw invalidArgument('bytes must be a Uint8Array', 'Uint8Array');
}

function checkQuantum(quantum: unknown): number {
  if (typeof quantum !== 'number' || !Number.isInteger(quantum) || quantum < 1 || quantum > MAX_QUANTUM) {
    throw invalidArgument(`quantum must be an integer 1..${MAX_QUANTUM}, got ${String(quantum)}`, '1..255');
  }
  return quantum;
}

function checkSize(size: unknown, quantum: number): number {
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > 0xffff_ffff || size % quantum !== 0) {
    throw invalidArgument(
      `size must be a positive multiple of the quantum ${quantum} below 2^32, got ${String(size)}`,
      'a positive multiple of quantum',
    );
  }
  return size;
}

function outputFor(
  pcs: Uint32Array,
  options: LookupManyOptions | null | undefined,
): { out: Int32Array; fill: boolean; outside: number } {
  if (!(pcs instanceof Uint32Array)) throw invalidArgument('pcs must be a Uint32Array', 'Uint32Array');
  const out = options?.out ?? new Int32Array(pcs.length);
  if (!(out instanceof Int32Array) || out.length < pcs.length)
    throw invalidArgument('out must be an Int32Array at least as long as pcs', 'Int32Array');
  const outside = options?.outside;
  if (outside !== undefined && (!Number.isInteger(outside) || outside < -0x8000_0000 || outside > 0x7fff_ffff)) {
    throw invalidArgument('outside must be an int32', 'int32');
  }
  return { out, fill: outside !== undefined, outside: outside ?? 0 };
}

function outOfRange(index: number, pc: number, size: number): ProfpackError {
  return new ProfpackError(`pcs[${index}] = ${pc} is outside the table's [0, ${size})`, {
    code: ErrorCode.PCTABLE_PC_OUT_OF_RANGE,
    expected: `a PC below ${size}, or options.outside`,
    details: { index, pc },
  });
}

/** Decodes a whole varint table (up to its 0x00 terminator; later bytes are ignored). */
export function decodeVarintTable(bytes: Uint8Array, quantum = 1): VarintRun[] {
  checkBytes(bytes);
  const decoded = impl.decodeVarint(bytes, checkQuantum(quantum));
  const runs: VarintRun[] = new Array(decoded.values.length);
  let start = 0;
  for (let i = 0; i < runs.length; i++) {
    runs[i] = { value: decoded.values[i]!, startPc: start, endPc: decoded.ends[i]! };
    start = decoded.ends[i]!;
  }
  return runs;
}

/**
 * runtime.pcvalue's lookup: scans from the start to the run holding `pc`; null
 * for a PC past the table. Reads only up to that run (one value never crosses N-API).
 */
export function lookupVarint(bytes: Uint8Array, pc: number, quantum = 1): VarintHit | null {
  checkBytes(bytes);
  checkQuantum(quantum);
  if (typeof pc !== 'number' || !Number.isInteger(pc))
    throw invalidArgument(`pc must be an integer, got ${String(pc)}`, 'an integer');
  if (pc < 0) return null;
  return js.lookupVarint(bytes, pc, quantum);
}

/** A pcvalue table in the linear-index encoding, with the size the format needs beside it. */
export class PcTable {
  /** Bytes of PCs covered: lookups answer for [0, size). */
  readonly size: number;
  readonly quantum: number;
  private readonly view: js.LinearView;
  /** @internal */
  readonly handle: Handle;

  private constructor(view: js.LinearView, handle: Handle) {
    this.view = view;
    this.handle = handle;
    this.size = view.size;
    this.quantum = view.quantum;
  }

  /** Encodes a varint-delta table (terminator included; later bytes ignored). */
  /** `options` null or left out: no options (quantum 1, no size to check). */
  static fromVarint(bytes: Uint8Array, options: PcTableOptions | null = {}): PcTable {
    checkBytes(bytes);
    const quantum = checkQuantum(options?.quantum ?? 1);
    const expectedSize = options?.size === undefined ? 0 : checkSize(options.size, quantum);
    const result = impl.fromVarint(bytes, quantum, expectedSize);
    if (pctableNative === null) return new PcTable(result.handle as js.LinearView, result.handle);
    const view = js.linearGeometry(result.linear, result.size, quantum);
    view.varint = bytes.subarray(0, result.end);
    return new PcTable(view, result.handle);
  }

  /** Reads (and validates) a linear encoding; the size comes from elsewhere (the format has none). */
  static fromLinear(bytes: Uint8Array, options: PcTableOptions | null): PcTable {
    checkBytes(bytes);
    const quantum = checkQuantum(options?.quantum ?? 1);
    const size = checkSize(options?.size, quantum);
    const handle = impl.fromLinear(bytes, size, quantum);
    return new PcTable(
      pctableNative === null ? (handle as js.LinearView) : js.linearGeometry(bytes, size, quantum),
      handle,
    );
  }

  /** The linear encoding (chunk index + chunks). Do not modify it. */
  get bytes(): Uint8Array {
    return this.view.bytes;
  }
  /** The varint table this came from, or null when read with fromLinear. */
  get varint(): Uint8Array | null {
    return this.view.varint;
  }
  get chunkCount(): number {
    return this.view.chunks;
  }
  /** Chunk index entry width in bytes: 0 (one chunk), 1, 2 or 4. */
  get indexWidth(): IndexWidth {
    return this.view.width;
  }

  /** The value at `pc` (bytes from the entry), or null outside [0, size). */
  lookup(pc: number): number | null {
    if (pc >>> 0 !== pc) {
      if (typeof pc === 'number' && Number.isInteger(pc)) return null;
      throw invalidArgument(`pc must be an integer, got ${String(pc)}`, 'an integer');
    }
    if (pc >= this.size) return null;
    return js.lookupLinear(this.view, pc);
  }

  /** The value at every PC, in one N-API crossing. */
  lookupMany(pcs: Uint32Array, options?: LookupManyOptions | null): Int32Array {
    const { out, fill, outside } = outputFor(pcs, options);
    const bad = impl.lookupMany(this.handle, pcs, out, fill, outside);
    if (bad >= 0) throw outOfRange(bad, pcs[bad]!, this.size);
    return out;
  }
}

/** Many tables in one place, for batches of (table, PC) lookups that cross N-API once. */
export class PcTableSet {
  readonly tables: readonly PcTable[];
  private readonly handle: SetHandle;
  /** True when every table came from a varint table, so lookupVarintMany works. */
  readonly hasVarint: boolean;

  constructor(tables: readonly PcTable[]) {
    if (!Array.isArray(tables) || !tables.every((t) => t instanceof PcTable))
      throw invalidArgument('tables must be an array of PcTable', 'PcTable[]');
    this.tables = tables.slice();
    this.handle = impl.openSet(this.tables.map((t) => t.handle));
    this.hasVarint = this.tables.every((t) => t.varint !== null);
  }

  get length(): number {
    return this.tables.length;
  }

  /** Linear-index lookups: out[i] = tables[tableIndex[i]] at pcs[i]. */
  lookupMany(tableIndex: Uint32Array, pcs: Uint32Array, options?: LookupManyOptions | null): Int32Array {
    return this.run(tableIndex, pcs, options, false);
  }

  /** The same through the varint tables with runtime.pcvalue's scan (the baseline). */
  lookupVarintMany(tableIndex: Uint32Array, pcs: Uint32Array, options?: LookupManyOptions | null): Int32Array {
    if (!this.hasVarint)
      throw invalidArgument('lookupVarintMany needs tables made with PcTable.fromVarint', 'tables from fromVarint');
    return this.run(tableIndex, pcs, options, true);
  }

  private run(
    tableIndex: Uint32Array,
    pcs: Uint32Array,
    options: LookupManyOptions | null | undefined,
    useVarint: boolean,
  ): Int32Array {
    const { out, fill, outside } = outputFor(pcs, options);
    if (!(tableIndex instanceof Uint32Array) || tableIndex.length !== pcs.length) {
      throw invalidArgument('tableIndex must be a Uint32Array as long as pcs', 'Uint32Array');
    }
    const bad = impl.setLookupMany(this.handle, tableIndex, pcs, out, fill, outside, useVarint);
    if (bad >= 0) {
      const table = this.tables[tableIndex[bad]!];
      if (table === undefined) {
        throw new ProfpackError(
          `tableIndex[${bad}] = ${tableIndex[bad]} is not a table of this set of ${this.tables.length}`,
          {
            code: ErrorCode.INVALID_ARGUMENT,
            expected: `a table index below ${this.tables.length}`,
            details: { index: bad },
          },
        );
      }
      throw outOfRange(bad, pcs[bad]!, table.size);
    }
    return out;
  }
}
