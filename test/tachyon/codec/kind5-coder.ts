// The stack-table coder of block kind 5 as profpack wrote it before issue 19
// (docs/format-v2.md §4.2), kept only to drive the decoder that still reads
// those files (lib/tachyon/codec/stacktable.ts) with generated inputs.
import { ErrorCode, ProfpackError } from '../../../lib/errors';
import { V2_MAX_STACK_DEPTH as MAX_STACK_DEPTH } from '../../../lib/tachyon/codec/format';
import { ChildTable, type StackPath, type StackTableSinks } from '../../../lib/tachyon/codec/stacktable';

/** Writer side: interns stacks, one instance per file (kind 5). */
export class StackTableCoder {
  /** Stacks defined so far (ids 1..defined). */
  defined = 0;
  private readonly table = new ChildTable();

  /**
   * Codes `stack` (frame indices, innermost first; at most 4,096) into the
   * block's columns. Returns the stack id.
   */
  encode(stack: ArrayLike<number>, out: StackTableSinks, path?: StackPath): number {
    const depth = stack.length;
    if (depth > MAX_STACK_DEPTH) {
      throw new ProfpackError(`stack of ${depth} frames exceeds the limit of ${MAX_STACK_DEPTH}`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: `at most ${MAX_STACK_DEPTH} frames`,
      });
    }
    // Walk from the outermost frame. A thread's previous stack usually shares a long
    // outermost run with this one: its node ids are reused without a lookup.
    let id = 0;
    let level = 0;
    path?.reserve(depth);
    if (path !== undefined) {
      const limit = Math.min(depth, path.depth);
      while (level < limit && path.frames[level] === stack[depth - 1 - level]! >>> 0) {
        id = path.ids[level]!;
        level++;
      }
    }
    let i = depth - 1 - level;
    for (; i >= 0; i--) {
      const frame = stack[i]! >>> 0;
      const found = this.table.get(id, frame);
      if (found < 0) break;
      id = found;
      if (path !== undefined) {
        path.frames[level] = frame;
        path.ids[level] = id;
      }
      level++;
    }
    if (i >= 0) {
      const before = this.defined;
      const ref = before + i + 1;
      out.stacks.u8(ref & 0xff);
      out.stacksHigh.uvarint(Math.floor(ref / 256));
      const distance = before + 1 - id;
      out.parents.u8(distance & 0xff);
      out.parentsHigh.uvarint(Math.floor(distance / 256));
      for (; i >= 0; i--) {
        const frame = stack[i]! >>> 0;
        out.stackFrames.uvarint(frame);
        const child = ++this.defined;
        this.table.set(id, frame, child);
        id = child;
        if (path !== undefined) {
          path.frames[level] = frame;
          path.ids[level] = id;
        }
        level++;
      }
    } else {
      out.stacks.u8(id & 0xff);
      out.stacksHigh.uvarint(Math.floor(id / 256));
    }
    if (path !== undefined) path.depth = depth;
    return id;
  }

  /** Exposed for tests: the stacks the coder holds. */
  get size(): number {
    return this.defined;
  }
}
