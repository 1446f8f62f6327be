/**
 * How the typed columns in lib/ grow: a copy into a new array of the same kind. Tables, tries, live sets and
 * remapping arrays double as they fill (amortized O(1) per entry); these are their one copy step and one policy.
 */

/** The typed arrays lib/ keeps columns in. */
export type TypedColumn = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;

/** `a` copied into a new array of its kind with `length` elements (at least a.length); the new ones are `fill`. */
export function resized<A extends TypedColumn>(a: A, length: number, fill = 0): A {
  const b = new (a.constructor as new (length: number) => A)(length);
  if (fill !== 0) b.fill(fill, a.length);
  b.set(a);
  return b;
}

/** A copy of `a` with room for index `need`: its length (64 at least) doubled until it has; the new ones `fill`. */
export function grown<A extends TypedColumn>(a: A, need: number, fill = 0): A {
  let size = Math.max(a.length, 64);
  while (size <= need) size *= 2;
  return resized(a, size, fill);
}
