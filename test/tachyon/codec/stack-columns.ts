/** The stack-table codings' five columns, for tests of stacktable.ts (kind 5) and recent.ts (kind 6). */
import { expect } from 'vitest';
import { ProfpackError } from '../../../lib/errors';
import { ByteSink, ByteSource } from '../../../lib/tachyon/codec/bytes';
import type { StackTableSinks, StackTableSources } from '../../../lib/tachyon/codec/stacktable';
import { V2_MAX_STACK_DEPTH } from '../../../lib/tachyon/codec/format';

export type Columns = { [K in keyof StackTableSinks]: number[] | Uint8Array };

export function sinks(): StackTableSinks {
  return {
    stacks: new ByteSink(),
    stacksHigh: new ByteSink(),
    parents: new ByteSink(),
    parentsHigh: new ByteSink(),
    stackFrames: new ByteSink(),
  };
}

/** Each column gets its own base (0, 1000, 2000, ...) so an error offset names its column. */
export function sources(columns: Columns): StackTableSources {
  let base = 0;
  const make = (bytes: number[] | Uint8Array) => {
    const b = Uint8Array.from(bytes);
    const src = new ByteSource(b, 0, b.length, base);
    base += 1000;
    return src;
  };
  return {
    stacks: make(columns.stacks),
    stacksHigh: make(columns.stacksHigh),
    parents: make(columns.parents),
    parentsHigh: make(columns.parentsHigh),
    stackFrames: make(columns.stackFrames),
  };
}

export function columnsOf(out: StackTableSinks): Columns {
  return {
    stacks: out.stacks.view(),
    stacksHigh: out.stacksHigh.view(),
    parents: out.parents.view(),
    parentsHigh: out.parentsHigh.view(),
    stackFrames: out.stackFrames.view(),
  };
}

type StackDecoder = { decode(src: StackTableSources, out: Uint32Array): number };

/** Decodes `count` stacks from what a coder wrote into `out`; every column must be used up. */
export function decodeAll(decoder: StackDecoder, out: StackTableSinks, count: number): number[][] {
  return decodeColumns(decoder, columnsOf(out), count);
}

/** Decodes `count` stacks from hand-made columns; every column must be used up. */
export function decodeColumns(decoder: StackDecoder, columns: Columns, count: number): number[][] {
  const src = sources(columns);
  const buffer = new Uint32Array(V2_MAX_STACK_DEPTH);
  const decoded = Array.from({ length: count }, () => Array.from(buffer.subarray(0, decoder.decode(src, buffer))));
  for (const column of Object.values(src)) expect(column.remaining()).toBe(0);
  return decoded;
}

/** Decodes `samples` stacks from hand-made columns and returns the ProfpackError it must end with. */
export function decodeError(decoder: StackDecoder, columns: Columns, samples = 1): ProfpackError {
  const src = sources(columns);
  const buffer = new Uint32Array(V2_MAX_STACK_DEPTH);
  try {
    for (let i = 0; i < samples; i++) decoder.decode(src, buffer);
  } catch (err) {
    expect(err).toBeInstanceOf(ProfpackError);
    return err as ProfpackError;
  }
  throw new Error('decode did not fail');
}
