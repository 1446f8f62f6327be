/**
 * What the text formats' adapters share: the input's bytes, JSON parsed into
 * coded errors, the value column a writer writes, and output in chunks (a
 * 1 M-sample output never becomes one string: V8 caps strings near 512 MB).
 */
import { ErrorCode, ProfpackError, invalidArgument } from '../errors';
import { readInputFile } from '../input';
import { chooseSampleType, labelKeys, sampleTypeName, type Label, type ProfileMeta } from '../profile/index';
import type { ReadInput, WriteTarget } from './adapter';
import { resized } from '../typed-arrays';

export function inputBytes(input: ReadInput): Uint8Array {
  if (input.bytes !== undefined) return input.bytes;
  if (input.path !== undefined) return readInputFile(input.path);
  throw invalidArgument('a read needs the bytes or the path of its input', '{ bytes } or { path }');
}

/** UTF-8 text of (part of) a byte array, without copying the bytes. */
export function utf8(bytes: Uint8Array, from = 0, to = bytes.length): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('utf8');
}

export function badInput(what: string, message: string, expected: string, offset?: number): ProfpackError {
  return new ProfpackError(`not a valid ${what}: ${message}`, { code: ErrorCode.CONVERT_BAD_INPUT, expected, offset });
}

/** A source a writer cannot put in its format (a negative byte count, bytes as a .cpuprofile). */
export function cannotWrite(what: string, message: string, expected: string): ProfpackError {
  return new ProfpackError(`cannot write ${what}: ${message}`, { code: ErrorCode.CONVERT_BAD_INPUT, expected });
}

/**
 * A negative value written where the format's own readers refuse one (a diff
 * profile's shrinkage into speedscope, flamegraph.pl, DevTools): refused, naming
 * the record and why, instead of a file nothing opens.
 */
export function negativeValue(what: string, value: number, type: string, refusedBy: string): ProfpackError {
  return new ProfpackError(
    `cannot write ${what}: a record weighs ${value} ${type}; ${refusedBy} refuses negative weights ` +
      '(a diff profile: write pprof, which keeps them)',
    { code: ErrorCode.CONVERT_NEGATIVE_VALUE, expected: 'values of 0 or more', details: { value } },
  );
}

/** JSON.parse of the whole input; a syntax error is a coded error at its byte offset where V8 says it. */
export function parseJson(bytes: Uint8Array, what: string, expected: string): unknown {
  const text = utf8(bytes);
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /position (\d+)/.exec(message);
    const offset = at === null ? undefined : Buffer.byteLength(text.slice(0, Number(at[1])));
    throw new ProfpackError(`${what} is not valid JSON: ${message}`, {
      code: ErrorCode.CONVERT_BAD_INPUT,
      expected,
      offset,
      cause: err,
    });
  }
}

/**
 * Runs a JSON reader: a value of the wrong type somewhere in the document (a
 * TypeError or RangeError from the reader's own code) becomes one coded error
 * instead of a crash. Readers check the structure they rely on; this catches
 * the leaves they take on trust.
 */
export function readJsonShape<T>(what: string, expected: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError) {
      throw new ProfpackError(`not a valid ${what}: a value has the wrong type (${err.message})`, {
        code: ErrorCode.CONVERT_BAD_INPUT,
        expected,
        cause: err,
      });
    }
    throw err;
  }
}

/** The value column a writer writes: `wanted` ("alloc_space", "type/unit" or an index), else the default type. */
export function writtenColumn(meta: ProfileMeta, wanted: string | undefined): number {
  if (wanted === undefined) return meta.defaultSampleType;
  const asIndex = /^\d+$/.test(wanted) ? Number(wanted) : wanted;
  return chooseSampleType(meta, asIndex);
}

export function describeType(meta: ProfileMeta, column: number): string {
  return sampleTypeName(meta.sampleTypes[column]!);
}

/** Text output gathered into chunks of about 64 KiB before each target.write. */
export class ChunkedText {
  private parts: string[] = [];
  private size = 0;

  constructor(
    private readonly target: WriteTarget,
    private readonly chunkChars = 1 << 16,
  ) {}

  push(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= this.chunkChars) this.flush();
  }

  flush(): void {
    if (this.parts.length === 0) return;
    this.target.write(this.parts.join(''));
    this.parts = [];
    this.size = 0;
  }
}

/** Writes `values` as the items of a JSON array ("1,2,3"), in chunks. */
export function pushNumbers(out: ChunkedText, values: ArrayLike<number>, length = values.length): void {
  const step = 4096;
  for (let from = 0; from < length; from += step) {
    const to = Math.min(length, from + step);
    let s = from === 0 ? '' : ',';
    for (let i = from; i < to; i++) s += (i === from ? '' : ',') + String(values[i]);
    out.push(s);
  }
}

/** A typed column that doubles as it fills. */
class Growing<A extends Float64Array | Uint32Array> {
  length = 0;

  constructor(public data: A) {}

  push(v: number): void {
    if (this.length === this.data.length) this.data = resized(this.data, this.length * 2);
    this.data[this.length++] = v;
  }

  view(): A {
    return this.data.subarray(0, this.length) as A;
  }
}

export class GrowingFloats extends Growing<Float64Array> {
  constructor() {
    super(new Float64Array(256));
  }
}

export class GrowingUints extends Growing<Uint32Array> {
  constructor() {
    super(new Uint32Array(256));
  }
}

/**
 * Labels of written records that the output format cannot hold: noted per
 * record, then said once through onWarning naming their keys, so no label
 * goes missing silently.
 */
export class DroppedLabels {
  private readonly sets = new Set<number>();
  records = 0;

  note(set: number): void {
    if (set === 0) return;
    this.records++;
    this.sets.add(set);
  }

  /** The keys dropped ('"pid", "span id"'), or '' when none were. */
  keys(labelSets: readonly (readonly Label[])[]): string {
    const keys = labelKeys([...this.sets].map((id) => labelSets[id] ?? []));
    return keys.map((k) => JSON.stringify(k)).join(', ');
  }

  warn(labelSets: readonly (readonly Label[])[], format: string, onWarning?: (message: string) => void): void {
    const keys = this.keys(labelSets);
    if (keys !== '')
      onWarning?.(
        `${format} has no labels: ${keys} of ${this.records} records not written ` +
          '(Tachyon version 2 and pprof keep them)',
      );
  }
}
