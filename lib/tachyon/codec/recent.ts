/**
 * The stack-table coding with recency references (BlockKind.StackTableRecent):
 * the same prefix tree as stacktable.ts (one for the file, all
 * threads; node 0 the empty stack, node n = (parent, frame)), but a sample
 * names its stack by where it was seen last instead of by node id, so the
 * residue is small repeated numbers rather than growing ids:
 *
 * - `base`: the stack of the sample `dist` samples back in the file (any
 *   thread), cut by `pop` innermost frames; dist 0 = the empty stack.
 * - `k` new frames below the base, each a new node (the tree had no path).
 *
 * Per sample: `stacks` u8 = min(k, 255) (k ≥ 255: k − 255 as LEB128 in
 * `stacksHigh`); `parents` LEB128 dist; `parentsHigh` LEB128 pop (only when
 * dist ≥ 1); `stackFrames` per new frame LEB128 zigzag32(i32(frame − caller)),
 * caller = the base's innermost frame (0 for the empty stack), then the new
 * frame before it. Deltas from the caller are 30–45 % smaller than frame
 * indices raw and 1–7 % smaller after zstd-5 (bench/RESULTS.md ## v2).
 *
 * The coder picks the deepest tree node B on the stack's path and a sample
 * whose stack passed through B: the thread's previous sample when B is on
 * its previous stack, else the sample stamped on B. Nodes are stamped when
 * created and when a thread's path leaves them (with that thread's last
 * sample through them, if later than the stamp), so the work per sample is
 * the frames that change, not the depth; every stamp names a sample whose
 * stack passed through the node, so a reference always exists. The decoder
 * keeps one node id per sample.
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { V2_MAX_STACK_DEPTH } from './format';
import { grown } from '../../typed-arrays';
import { ChildTable, type StackPath, type StackTableSinks, type StackTableSources } from './stacktable';

/** `stacks` byte value that says k continues in `stacksHigh`. */
const K_ESCAPE = 255;
/** dist is a u32 in the file; a base further back than this is coded from the empty stack. */
const MAX_DIST = 0xffff_ffff;

/** Writer side: one instance per file. */
export class RecentStackCoder {
  /** Nodes defined so far (ids 1..defined). */
  defined = 0;
  /** Samples coded so far. */
  samples = 0;
  private readonly table = new ChildTable();
  /** Per node: a sample whose stack passed through it (sample number), and that stack's depth. */
  private lastSeen = new Float64Array(1024);
  private lastDepth = new Uint16Array(1024);

  /** `maxDepth`: the sample region's V2_MAX_STACK_DEPTH; the heap section keeps version 1's 256. */
  constructor(private readonly maxDepth = V2_MAX_STACK_DEPTH) {}

  /**
   * Codes `stack` (frame indices, innermost first; at most maxDepth) into the
   * block's columns. `path` is the thread's previous stack (outermost first)
   * and its node ids, updated to this one. Returns the stack's node id.
   */
  encode(stack: ArrayLike<number>, out: StackTableSinks, path: StackPath): number {
    const depth = stack.length;
    if (depth > this.maxDepth) {
      throw new ProfpackError(`stack of ${depth} frames exceeds the limit of ${this.maxDepth}`, {
        code: ErrorCode.INVALID_ARGUMENT,
        expected: `at most ${this.maxDepth} frames`,
      });
    }
    path.reserve(depth);
    const frames = path.frames;
    const ids = path.ids;
    // The thread's previous stack usually shares a long outermost run with this one.
    let id = 0;
    let level = 0;
    const limit = Math.min(depth, path.depth);
    while (level < limit && frames[level] === stack[depth - 1 - level]! >>> 0) {
      id = ids[level]!;
      level++;
    }
    const keep = level;
    // The previous stack's nodes below the kept prefix leave this thread's path.
    const previousDepth = path.depth;
    for (let l = keep; l < previousDepth; l++) {
      const node = ids[l]!;
      if (this.lastSeen[node]! < path.sample) {
        this.lastSeen[node] = path.sample;
        this.lastDepth[node] = previousDepth;
      }
    }
    for (; level < depth; level++) {
      const frame = stack[depth - 1 - level]! >>> 0;
      const found = this.table.get(id, frame);
      if (found < 0) break;
      id = found;
      frames[level] = frame;
      ids[level] = id;
    }
    const now = this.samples++;
    const onPath = level === keep;
    const dist = now - (onPath ? path.sample : this.lastSeen[id]!);
    let intern = true;
    if (level > 0 && dist > MAX_DIST) {
      // Not reachable below 2^32 samples; kept so that dist always fits its u32.
      level = 0;
      id = 0;
      intern = false;
    }
    const k = depth - level;
    if (k >= K_ESCAPE) {
      out.stacks.u8(K_ESCAPE);
      out.stacksHigh.uvarint(k - K_ESCAPE);
    } else {
      out.stacks.u8(k);
    }
    if (level === 0) {
      out.parents.uvarint(0);
    } else {
      out.parents.uvarint(dist);
      out.parentsHigh.uvarint((onPath ? previousDepth : this.lastDepth[id]!) - level);
    }
    if (k > 0) {
      if (this.defined + k >= this.lastSeen.length) {
        this.lastSeen = grown(this.lastSeen, this.defined + k);
        this.lastDepth = grown(this.lastDepth, this.defined + k);
      }
      let caller = level === 0 ? 0 : frames[level - 1]!;
      for (; level < depth; level++) {
        const frame = stack[depth - 1 - level]! >>> 0;
        const delta = (frame - caller) | 0;
        out.stackFrames.uvarint(((delta << 1) ^ (delta >> 31)) >>> 0);
        caller = frame;
        const child = ++this.defined;
        if (intern) this.table.set(id, frame, child);
        this.lastSeen[child] = now;
        this.lastDepth[child] = depth;
        id = child;
        frames[level] = frame;
        ids[level] = id;
      }
    }
    path.depth = depth;
    path.sample = now;
    return id;
  }
}

/** Reader side: the tree as parallel arrays and the node of every sample so far. */
export class RecentStackDecoder {
  defined = 0;
  samples = 0;
  private parent = new Uint32Array(1024);
  private frame = new Uint32Array(1024);
  private depth = new Uint16Array(1024);
  private history = new Uint32Array(1024);

  /** `maxDepth`: the sample region's V2_MAX_STACK_DEPTH; the heap section keeps version 1's 256. */
  constructor(private readonly maxDepth = V2_MAX_STACK_DEPTH) {}

  /**
   * Reads one sample's stack from the block's columns and writes it,
   * innermost first, into `out`. Returns the depth.
   */
  decode(src: StackTableSources, out: Uint32Array): number {
    const kAt = src.stacks.pos;
    let k = src.stacks.u8('new frame count');
    if (k === K_ESCAPE) k += src.stacksHigh.uvarint32();
    const distAt = src.parents.pos;
    const dist = src.parents.uvarint32();
    let base = 0;
    if (dist !== 0) {
      if (dist > this.samples) {
        throw src.parents.fail(
          ErrorCode.V2_UNDEFINED_STACK,
          `sample ${this.samples} names the stack of the sample ${dist} back, but only ${this.samples} precede it`,
          `a distance of at most ${this.samples}`,
          distAt,
        );
      }
      base = this.history[this.samples - dist]!;
      const popAt = src.parentsHigh.pos;
      const pop = src.parentsHigh.uvarint32();
      if (pop > this.depth[base]!) {
        throw src.parentsHigh.fail(
          ErrorCode.V2_BAD_KEEP,
          `cuts ${pop} frames off a stack of ${this.depth[base]}`,
          `at most ${this.depth[base]} frames`,
          popAt,
        );
      }
      for (let i = 0; i < pop; i++) base = this.parent[base]!;
    }
    const baseDepth = this.depth[base]!;
    if (baseDepth + k > this.maxDepth) {
      throw src.stacks.fail(
        ErrorCode.V2_STACK_TOO_DEEP,
        `stack would have ${baseDepth + k} frames`,
        `at most ${this.maxDepth} frames`,
        kAt,
      );
    }
    let id = base;
    if (k > 0) {
      const frames = src.stackFrames;
      // Every new frame costs at least one byte of the frames column.
      if (k > frames.remaining()) {
        throw src.stacks.fail(
          ErrorCode.V2_TRUNCATED,
          `${k} new frames but the frames column has ${frames.remaining()} bytes left`,
          `at most ${frames.remaining()} new frames`,
          kAt,
        );
      }
      const last = this.defined + k;
      if (last >= this.parent.length) {
        this.parent = grown(this.parent, last);
        this.frame = grown(this.frame, last);
        this.depth = grown(this.depth, last);
      }
      let caller = base === 0 ? 0 : this.frame[base]!;
      for (let n = this.defined + 1; n <= last; n++) {
        const zz = frames.uvarint32();
        caller = (caller + ((zz >>> 1) ^ -(zz & 1))) >>> 0;
        this.parent[n] = id;
        this.frame[n] = caller;
        this.depth[n] = this.depth[id]! + 1;
        id = n;
      }
      this.defined = last;
    }
    if (this.samples >= this.history.length) this.history = grown(this.history, this.samples);
    this.history[this.samples++] = id;
    // Walk from the stack to the root: innermost first, bounded by the stored depth.
    const depth = this.depth[id]!;
    for (let i = 0; i < depth; i++) {
      out[i] = this.frame[id]!;
      id = this.parent[id]!;
    }
    return depth;
  }
}
