/**
 * The model section's producer fields (docs/format-v2.md §8, presence bit 64):
 * what recorded the file, as named typed fields (a Node recording's Node
 * version, platform, arch, pid, argv, interval, mode, source-map use…: the
 * fields of lib/recorded-by.ts). Version 1 keeps the same fields as one JSON
 * string no frame names; here each is a field of its own, in the section's
 * string table.
 */
import type { ProfpackError } from '../../../errors';
import type { ByteSink, ByteSource } from '../bytes';

/** A field's value: a string, a number, a flag or a list of strings. */
export type ProducerValue = string | number | boolean | string[];
export type ProducerFields = Record<string, ProducerValue>;

/** How a field's value is stored. */
export const ProducerKind = { String: 0, Integer: 1, Float64: 2, False: 3, True: 4, StringList: 5 } as const;

/** Integers up to this size are zigzag LEB128 (exact in a double, as the section's label numbers). */
const MAX_INTEGER = 2 ** 52;

function zigzag(d: number): number {
  return d >= 0 ? 2 * d : -2 * d - 1;
}

/** Appends the fields: count, then per field its key string, kind byte and value. `str` interns a string. */
export function encodeProducerFields(body: ByteSink, fields: ProducerFields, str: (s: string) => number): void {
  const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
  body.uvarint(entries.length);
  for (const [key, value] of entries) {
    body.uvarint(str(key));
    if (typeof value === 'string') {
      body.u8(ProducerKind.String);
      body.uvarint(str(value));
    } else if (typeof value === 'boolean') body.u8(value ? ProducerKind.True : ProducerKind.False);
    else if (Array.isArray(value)) {
      body.u8(ProducerKind.StringList);
      body.uvarint(value.length);
      for (const s of value) body.uvarint(str(String(s)));
    } else if (Number.isSafeInteger(value) && Math.abs(value) <= MAX_INTEGER && !Object.is(value, -0)) {
      body.u8(ProducerKind.Integer);
      body.uvarint(zigzag(value));
    } else {
      body.u8(ProducerKind.Float64);
      const b = new Uint8Array(8);
      new DataView(b.buffer).setFloat64(0, value, true);
      body.append(b);
    }
  }
}

export interface ProducerDecoding {
  /** A string of the section by id (throws ERR_V2_BAD_MODEL for an id past the table). */
  str(what: string): string;
  /** A count bounded by the bytes left, each entry taking at least `minBytes`. */
  count(what: string, minBytes: number): number;
  uvarint53(what: string): number;
  float64(what: string): number;
  bad(message: string, expected: string, at: number): ProfpackError;
}

/** Reads the fields `encodeProducerFields` wrote; a repeated key keeps its last value. */
export function decodeProducerFields(src: ByteSource, d: ProducerDecoding): ProducerFields {
  const fields: ProducerFields = {};
  const n = d.count('producer field count', 2);
  for (let i = 0; i < n; i++) {
    const key = d.str('producer field key');
    const kindAt = src.pos;
    const kind = src.u8('producer field kind');
    let value: ProducerValue;
    if (kind === ProducerKind.String) value = d.str('producer field value');
    else if (kind === ProducerKind.Integer) {
      const z = d.uvarint53('producer field number');
      value = z % 2 === 0 ? z / 2 : -(z + 1) / 2;
    } else if (kind === ProducerKind.Float64) value = d.float64('producer field number');
    else if (kind === ProducerKind.False || kind === ProducerKind.True) value = kind === ProducerKind.True;
    else if (kind === ProducerKind.StringList) {
      const count = d.count('producer field list length', 1);
      value = [];
      for (let k = 0; k < count; k++) value.push(d.str('producer field list item'));
    } else throw d.bad(`unknown producer field kind ${kind}`, '0..5', kindAt);
    // A key named like an Object.prototype member must not reach the prototype.
    Object.defineProperty(fields, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return fields;
}
