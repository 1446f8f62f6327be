/**
 * A thread's live sampled objects in ordinal order, for the heap section's
 * relative frees (docs/format-v2.md §9): a free names its object by how many
 * live objects of the thread it skips, counted from the most recent one
 * (memtrace names a collection "the Nth most recent allocation" the same
 * way), so short-lived objects cost one small number and no ordinal.
 * The coder and the decoder hold the same list; the coder also keeps each
 * object's size, stack and allocation time (what a rotated file inherits).
 *
 * A treap ordered by ordinal with subtree counts, in typed columns: an insert,
 * a position's lookup and a removal are O(log n) whatever order the ordinals
 * come in. (A sorted array was O(1) for V8's ascending ordinals but moved the
 * whole list for each object below the newest: quadratic on a hostile file.)
 */
import { grown } from '../../../typed-arrays';

/** Node 0 is the empty tree: its count stays 0. */
const NIL = 0;

export class LiveList {
  private left = new Uint32Array(64);
  private right = new Uint32Array(64);
  private count = new Uint32Array(64);
  private priority = new Uint32Array(64);
  private ordinal = new Uint32Array(64);
  /** Payload, kept only by a coder (withPayload). */
  private sizes: Uint32Array | null = null;
  private stacks: Uint32Array | null = null;
  private times: Float64Array | null = null;
  private root = NIL;
  private used = 1;
  private freeNodes: number[] = [];
  /** xorshift32 state: a fixed seed, so a run is reproducible. */
  private seed = 0x9e3779b9;

  constructor(withPayload: boolean) {
    if (withPayload) {
      this.sizes = new Uint32Array(64);
      this.stacks = new Uint32Array(64);
      this.times = new Float64Array(64);
    }
  }

  get length(): number {
    return this.count[this.root]!;
  }

  /** Adds an object after every live one with an ordinal ≤ its own (V8's ordinals ascend: nearly always last). */
  insert(ordinal: number, size = 0, stack = 0, timeUs = 0): void {
    const node = this.newNode(ordinal);
    if (this.sizes !== null) {
      this.sizes[node] = size;
      this.stacks![node] = stack;
      this.times![node] = timeUs;
    }
    // Down the search path while the nodes outrank the new one (each gains it below), then the rest of that
    // subtree split around it: one descent and one split, nothing allocated.
    const priority = this.priority[node]!;
    let parent = NIL;
    let right = false;
    let n = this.root;
    while (n !== NIL && this.priority[n]! > priority) {
      this.count[n]!++;
      parent = n;
      right = this.ordinal[n]! <= ordinal;
      n = right ? this.right[n]! : this.left[n]!;
    }
    this.splitByOrdinal(n, ordinal);
    this.left[node] = this.splitLow;
    this.right[node] = this.splitHigh;
    this.update(node);
    this.link(parent, right, node);
  }

  /** How many live objects in positions [0, end) have an ordinal ≤ `ordinal`. */
  private upperBound(ordinal: number, end: number): number {
    let n = this.root;
    let below = 0;
    while (n !== NIL) {
      if (this.ordinal[n]! <= ordinal) {
        below += this.count[this.left[n]!]! + 1;
        n = this.right[n]!;
      } else n = this.left[n]!;
    }
    return Math.min(below, end);
  }

  /** The node at position `p` (0 ≤ p < length). */
  private at(p: number): number {
    let n = this.root;
    for (;;) {
      const l = this.count[this.left[n]!]!;
      if (p < l) n = this.left[n]!;
      else if (p === l) return n;
      else {
        p -= l + 1;
        n = this.right[n]!;
      }
    }
  }

  /** The ordinal at position `p` (0 ≤ p < length). */
  ordinalAt(p: number): number {
    return this.ordinal[this.at(p)]!;
  }

  /**
   * Coder: the gap of a freed ordinal below `cursor` (the previous free's
   * position, or the length for the batch's first), frees taken from the
   * highest ordinal down: [gap, position], or null when no live object below
   * the cursor has it (the free is dropped). The object is removed: positions
   * below it, where the batch's next frees are, do not move.
   */
  find(ordinal: number, cursor: number): [number, number] | null {
    const p = this.upperBound(ordinal, cursor) - 1;
    if (p < 0 || this.ordinalAt(p) !== ordinal) return null;
    this.removeAt(p);
    return [cursor - 1 - p, p];
  }

  /**
   * Decoder: the position a gap names below `cursor`, or -1 when it names
   * none; the object there is removed and its ordinal is `taken`.
   */
  take(gap: number, cursor: number): number {
    const p = cursor - 1 - gap;
    if (p < 0) return -1;
    this.taken = this.removeAt(p);
    return p;
  }

  /** The ordinal the last take() removed. */
  taken = 0;

  /** The live objects in ordinal order, as columns (the payload's are empty without one). */
  columns(): { ordinals: Uint32Array; sizes: Uint32Array; stacks: Uint32Array; timesUs: Float64Array } {
    const n = this.length;
    const out = {
      ordinals: new Uint32Array(n),
      sizes: new Uint32Array(this.sizes === null ? 0 : n),
      stacks: new Uint32Array(this.sizes === null ? 0 : n),
      timesUs: new Float64Array(this.sizes === null ? 0 : n),
    };
    // In-order walk with an explicit stack: a treap's depth is O(log n) expected, but not bounded.
    const path: number[] = [];
    let node = this.root;
    let i = 0;
    while (node !== NIL || path.length > 0) {
      while (node !== NIL) {
        path.push(node);
        node = this.left[node]!;
      }
      node = path.pop()!;
      out.ordinals[i] = this.ordinal[node]!;
      if (this.sizes !== null) {
        out.sizes[i] = this.sizes[node]!;
        out.stacks[i] = this.stacks![node]!;
        out.timesUs[i] = this.times![node]!;
      }
      i++;
      node = this.right[node]!;
    }
    return out;
  }

  /** Removes the object at position `p` (0 ≤ p < length); returns its ordinal. */
  private removeAt(p: number): number {
    // Down to the node, each node passed losing it from its count, then the node replaced by its two subtrees merged.
    let parent = NIL;
    let right = false;
    let n = this.root;
    for (;;) {
      const l = this.count[this.left[n]!]!;
      if (p === l) break;
      this.count[n]!--;
      parent = n;
      right = p > l;
      if (right) {
        p -= l + 1;
        n = this.right[n]!;
      } else n = this.left[n]!;
    }
    this.link(parent, right, this.merge(this.left[n]!, this.right[n]!));
    this.freeNodes.push(n);
    return this.ordinal[n]!;
  }

  /** Puts `child` where the descent left off: `parent`'s right or left subtree, or the root. */
  private link(parent: number, right: boolean, child: number): void {
    if (parent === NIL) this.root = child;
    else if (right) this.right[parent] = child;
    else this.left[parent] = child;
  }

  private newNode(ordinal: number): number {
    let node = this.freeNodes.pop();
    if (node === undefined) {
      node = this.used++;
      if (node === this.left.length) this.grow(node);
    }
    let x = this.seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.seed = x >>> 0;
    this.left[node] = NIL;
    this.right[node] = NIL;
    this.count[node] = 1;
    this.priority[node] = this.seed;
    this.ordinal[node] = ordinal;
    return node;
  }

  private grow(need: number): void {
    this.left = grown(this.left, need);
    this.right = grown(this.right, need);
    this.count = grown(this.count, need);
    this.priority = grown(this.priority, need);
    this.ordinal = grown(this.ordinal, need);
    if (this.sizes !== null) {
      this.sizes = grown(this.sizes, need);
      this.stacks = grown(this.stacks!, need);
      this.times = grown(this.times!, need);
    }
  }

  private update(n: number): void {
    this.count[n] = this.count[this.left[n]!]! + this.count[this.right[n]!]! + 1;
  }

  /** The result of splitByOrdinal: its two trees (fields, not a returned pair: a split ran for every object). */
  private splitLow = NIL;
  private splitHigh = NIL;

  /** Splits `n` into splitLow (the nodes with an ordinal ≤ `ordinal`) and splitHigh (the rest). */
  private splitByOrdinal(n: number, ordinal: number): void {
    if (n === NIL) {
      this.splitLow = this.splitHigh = NIL;
      return;
    }
    if (this.ordinal[n]! <= ordinal) {
      this.splitByOrdinal(this.right[n]!, ordinal);
      this.right[n] = this.splitLow;
      this.update(n);
      this.splitLow = n;
      return;
    }
    this.splitByOrdinal(this.left[n]!, ordinal);
    this.left[n] = this.splitHigh;
    this.update(n);
    this.splitHigh = n;
  }

  /** Every node of `a` before every node of `b`. */
  private merge(a: number, b: number): number {
    if (a === NIL) return b;
    if (b === NIL) return a;
    if (this.priority[a]! > this.priority[b]!) {
      this.right[a] = this.merge(this.right[a]!, b);
      this.update(a);
      return a;
    }
    this.left[b] = this.merge(a, this.left[b]!);
    this.update(b);
    return b;
  }
}
