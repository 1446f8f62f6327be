/**
 * The stack-table coding (BlockKind.StackTable): stacks are interned in one
 * prefix tree for the whole file (all threads). Stack id 0 is the empty
 * stack; stack n > 0 is (parent id, frame index), parent < n. A sample names
 * its stack by id; a stack never seen before is defined inline, in the
 * sample that first uses it.
 *
 * Per sample: `ref` (u32), stored as its low byte in the `stacks` column and
 * ref >> 8 (LEB128) in `stacksHigh` — byte planes, which zstd models far
 * better than LEB128 of the whole value (bench/RESULTS.md ## v2). With
 * `defined` = the number of stacks defined so far (ids 1..defined):
 * - ref ≤ defined: the sample's stack is stack `ref` (0 = empty);
 * - ref > defined: k = ref − defined new stacks follow, ids defined+1 ..
 *   defined+k; each is the child of the one before, the first the child of
 *   stack (defined + 1 − distance). `distance` (1..defined+1) is stored as
 *   byte planes too (`parents` low byte, `parentsHigh` LEB128 of the rest),
 *   the k frame indices as LEB128 in `stackFrames`, outermost first. The
 *   sample's stack is the last one defined.
 * New definitions always form one chain hanging off an existing stack, so
 * one parent per sample is enough; a parent must already exist, which makes
 * cycles impossible to express (distance 0 is rejected as one).
 *
 * profpack writes this kind no more (recent.ts replaced it); the
 * decoder reads the files written before. The tree (ChildTable), the thread
 * path (StackPath) and the sink/source shapes are shared with recent.ts.
 */
import { ErrorCode } from '../../errors';
import { grown } from '../../typed-arrays';
import type { ByteSink, ByteSource } from './bytes';
import { V2_MAX_STACK_DEPTH } from './format';

/** The block columns the stack table writes (see blocks.ts). */
export interface StackTableSinks {
  stacks: ByteSink;
  stacksHigh: ByteSink;
  parents: ByteSink;
  parentsHigh: ByteSink;
  stackFrames: ByteSink;
}
export interface StackTableSources {
  stacks: ByteSource;
  stacksHigh: ByteSource;
  parents: ByteSource;
  parentsHigh: ByteSource;
  stackFrames: ByteSource;
}

/**
 * (parent, frame) → child id. Each node's first child lives in arrays indexed
 * by the parent: a new chain is all first children, written in order. Other
 * children go to open addressing with linear probing in typed arrays: a Map
 * keyed by parent × 2^32 + frame spent most of its time hashing heap numbers
 * and in GC (bench: 3× slower writes). The native twin (block_encoder.cc) has
 * the same layout.
 */
export class ChildTable {
  /** First child + 1 of each parent (0 = none), and its frame. */
  private firstChild = new Uint32Array(1 << 12);
  private firstFrame = new Uint32Array(1 << 12);
  /** Slots of 3 u32: parent + 1 (0 = empty), frame, child. One cache line serves a probe. */
  private slots = new Uint32Array(3 << 12);
  private capacity = 1 << 12;
  private size = 0;

  private static slot(parent: number, frame: number, mask: number): number {
    return (Math.imul(parent ^ Math.imul(frame, 0x9e3779b1), 0x85ebca77) >>> 7) & mask;
  }

  get(parent: number, frame: number): number {
    if (parent >= this.firstChild.length) return -1;
    const first = this.firstChild[parent]!;
    if (first === 0) return -1;
    if (this.firstFrame[parent] === frame) return first - 1;
    const slots = this.slots;
    const mask = this.capacity - 1;
    const key = parent + 1;
    for (let i = ChildTable.slot(parent, frame, mask); ; i = (i + 1) & mask) {
      const at = i * 3;
      const p = slots[at]!;
      if (p === 0) return -1;
      if (p === key && slots[at + 1] === frame) return slots[at + 2]!;
    }
  }

  set(parent: number, frame: number, child: number): void {
    if (parent >= this.firstChild.length) {
      this.firstChild = grown(this.firstChild, parent);
      this.firstFrame = grown(this.firstFrame, parent);
    }
    if (this.firstChild[parent] === 0) {
      this.firstChild[parent] = child + 1;
      this.firstFrame[parent] = frame;
      return;
    }
    if ((this.size + 1) * 2 > this.capacity) this.grow();
    this.insert(parent, frame, child);
  }

  private insert(parent: number, frame: number, child: number): void {
    const slots = this.slots;
    const mask = this.capacity - 1;
    let i = ChildTable.slot(parent, frame, mask);
    while (slots[i * 3] !== 0) i = (i + 1) & mask;
    slots[i * 3] = parent + 1;
    slots[i * 3 + 1] = frame;
    slots[i * 3 + 2] = child;
    this.size++;
  }

  private grow(): void {
    const old = this.slots;
    this.capacity *= 2;
    this.slots = new Uint32Array(this.capacity * 3);
    this.size = 0;
    for (let at = 0; at < old.length; at += 3) if (old[at] !== 0) this.insert(old[at]! - 1, old[at + 1]!, old[at + 2]!);
  }
}

/**
 * A thread's previous stack (outermost first) and the stack id of each of its prefixes. Grown with the thread's
 * depth: a writer keeps one per thread it has seen, most of them shallow.
 */
export class StackPath {
  frames = new Uint32Array(64);
  ids = new Uint32Array(64);
  depth = 0;
  /** recent.ts: the file-wide number of the thread's previous sample. */
  sample = 0;

  /** Room for `depth` frames (at most V2_MAX_STACK_DEPTH, checked by the caller). */
  reserve(depth: number): void {
    if (depth <= this.frames.length) return;
    // Powers of two from 64: the last is V2_MAX_STACK_DEPTH itself.
    this.frames = grown(this.frames, depth - 1);
    this.ids = grown(this.ids, depth - 1);
  }
}

/** Reader side: the same tree as parallel arrays, grown as definitions arrive. */
export class StackTableDecoder {
  defined = 0;
  private parent = new Uint32Array(1024);
  private frame = new Uint32Array(1024);
  private depth = new Uint16Array(1024);

  private grow(need: number): void {
    this.parent = grown(this.parent, need);
    this.frame = grown(this.frame, need);
    this.depth = grown(this.depth, need);
  }

  /**
   * Reads one sample's stack from the block's columns and writes it,
   * innermost first, into `out`. Returns the depth.
   */
  decode(src: StackTableSources, out: Uint32Array): number {
    const refAt = src.stacks.pos;
    const low = src.stacks.u8('stack ref');
    const high = src.stacksHigh.uvarint32();
    if (high >= 0x100_0000)
      throw src.stacksHigh.fail(
        ErrorCode.V2_UNDEFINED_STACK,
        `stack ref ${high} × 256 does not fit u32`,
        'a u32 stack id',
      );
    const ref = high * 256 + low;
    let id = ref;
    if (ref > this.defined) {
      const k = ref - this.defined;
      const frames = src.stackFrames;
      // Every definition costs at least one byte of the frames column.
      if (k > frames.remaining()) {
        throw src.stacks.fail(
          ErrorCode.V2_UNDEFINED_STACK,
          `stack ${ref} needs ${k} new definitions but the frames column has ${frames.remaining()} bytes left`,
          `at most stack ${this.defined + frames.remaining()}`,
          refAt,
        );
      }
      const distanceAt = src.parents.pos;
      const distance = src.parents.u8('parent distance') + src.parentsHigh.uvarint32() * 256;
      if (distance === 0) {
        throw src.parents.fail(
          ErrorCode.V2_STACK_CYCLE,
          `stack ${this.defined + 1} is defined as its own parent`,
          'a parent distance of at least 1',
          distanceAt,
        );
      }
      if (distance > this.defined + 1) {
        throw src.parents.fail(
          ErrorCode.V2_UNDEFINED_STACK,
          `stack ${this.defined + 1} names parent ${this.defined + 1 - distance}, which is not defined`,
          `a distance of at most ${this.defined + 1}`,
          distanceAt,
        );
      }
      let parent = this.defined + 1 - distance;
      const parentDepth = parent === 0 ? 0 : this.depth[parent]!;
      if (parentDepth + k > V2_MAX_STACK_DEPTH) {
        throw src.stacks.fail(
          ErrorCode.V2_STACK_TOO_DEEP,
          `stack ${ref} would have ${parentDepth + k} frames`,
          `at most ${V2_MAX_STACK_DEPTH} frames`,
          refAt,
        );
      }
      if (ref >= this.parent.length) this.grow(ref);
      for (let n = this.defined + 1; n <= ref; n++) {
        this.parent[n] = parent;
        this.frame[n] = frames.uvarint32();
        this.depth[n] = (parent === 0 ? 0 : this.depth[parent]!) + 1;
        parent = n;
      }
      this.defined = ref;
    }
    // Walk from the stack to the root: innermost first, bounded by the stored depth.
    const depth = id === 0 ? 0 : this.depth[id]!;
    for (let i = 0; i < depth; i++) {
      out[i] = this.frame[id]!;
      id = this.parent[id]!;
    }
    return depth;
  }
}
