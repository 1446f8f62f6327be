/**
 * Numbers the allocation stacks of V8's sampling heap profile. V8 sends its
 * whole allocation tree at every poll, flat (probe.ts's FlatHeapProfile, both
 * samplers); each call frame and each stack (a frame called from a stack)
 * gets a number once, so that a batch names stacks by number and only the
 * stacks first met cross the pipe. V8 numbers its allocation nodes once per
 * sampling session (a node removed when its last sample dies and met again
 * gets a new id), so a node id seen before keeps its stack: a poll converts
 * only the nodes it has not met.
 */
import { pathToFileURL } from 'node:url';
import { callFrameKey, type CpuProfileCallFrame } from '../../../v8/index';
import { ErrorCode, ProfpackError } from '../../../errors';
import { HeapStacks } from '../../wire/index';
import { NO_PARENT, type FlatHeapProfile } from './probe';
import { resized } from '../../../typed-arrays';

/** A node of V8's sampling heap profile (HeapProfiler.SamplingHeapProfileNode). */
export interface SamplingHeapNode {
  id: number;
  callFrame: CpuProfileCallFrame;
  selfSize?: number;
  children?: SamplingHeapNode[];
}

/** Frames and stacks share one numeric key: parent stack (+1) above, frame below. */
const FRAME_KEY_SPAN = 2 ** 24;

/** The node-id cache is rebuilt from the nodes present once it holds this many times as many (V8 drops nodes). */
const STALE_NODE_FACTOR = 2;

/** A tree as the inspector sends it, flat (the samples left empty). */
export function flattenHeapTree(head: SamplingHeapNode): FlatHeapProfile {
  const nodes: SamplingHeapNode[] = [];
  const parents: number[] = [];
  const pending: [SamplingHeapNode, number][] = [[head, NO_PARENT]];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const [node, parent] = item;
    nodes.push(node);
    parents.push(parent);
    const children = node.children ?? [];
    for (let c = children.length - 1; c >= 0; c--) pending.push([children[c]!, node.id]);
  }
  const n = nodes.length;
  const strings: string[] = [];
  const flat: FlatHeapProfile = {
    nodeIds: new Uint32Array(n),
    parentIds: Uint32Array.from(parents),
    nameIds: new Uint32Array(n),
    urlIds: new Uint32Array(n),
    scriptIds: new Int32Array(n),
    lines: new Int32Array(n),
    columns: new Int32Array(n),
    strings,
    ordinals: new Uint32Array(0),
    sizes: new Uint32Array(0),
    sampleNodes: new Uint32Array(0),
  };
  for (let i = 0; i < n; i++) {
    const { id, callFrame: cf } = nodes[i]!;
    flat.nodeIds[i] = id;
    flat.nameIds[i] = strings.push(cf.functionName) - 1;
    flat.urlIds[i] = strings.push(cf.url) - 1;
    flat.scriptIds[i] = Number(cf.scriptId);
    flat.lines[i] = cf.lineNumber;
    flat.columns[i] = cf.columnNumber;
  }
  return flat;
}

export class HeapStackNumbers {
  readonly stacks = new HeapStacks();
  private readonly frameNumbers = new Map<string, number>();
  private readonly stackIds = new Map<number, number>();
  /** V8 node id -> stack id (-1: the root), for every node met (see STALE_NODE_FACTOR). */
  private stackOfNode = new Map<number, number>();
  /** Stacks and frames below these have been handed on (takeNew()). */
  private sentStacks = 0;
  private sentFrames = 0;
  /** Per stack: 1 when a frame of it is the recorder's own code (its allocations are not the program's). */
  private ownStacks = new Uint8Array(64);
  private readonly ownFrames: boolean[] = [];
  private readonly ownPrefixes: string[];
  /**
   * What earlier polls said of each script and function. V8 names a node's script and line at each poll, from
   * the script if it is still alive: once a script's functions are all collected (a server closed), its
   * frames come back with an empty url and line -1 but the same scriptId, so they take the earlier answer.
   * A name met at two places of one script is ambiguous (null) and stays as V8 gave it.
   */
  private readonly scriptUrls = new Map<string, string>();
  private readonly placeOfFunction = new Map<string, { line: number; column: number } | null>();

  /** `ownDir`: the recorder's code; allocations with a frame in it are left out. */
  constructor(ownDir?: string) {
    this.ownPrefixes = ownDir === undefined ? [] : [ownDir, pathToFileURL(ownDir).href];
  }

  /** Whether an allocation with this stack was the recorder's own. */
  isOwn(stack: number): boolean {
    return stack >= 0 && this.ownStacks[stack] === 1;
  }

  /** Whether a frame of this script is the recorder's own code. */
  isOwnUrl(url: string | null | undefined): boolean {
    return typeof url === 'string' && this.ownPrefixes.some((p) => url.startsWith(p));
  }

  private frameNumber(flat: FlatHeapProfile, i: number): number {
    const cf: CpuProfileCallFrame = {
      functionName: flat.strings[flat.nameIds[i]!] ?? '',
      scriptId: String(flat.scriptIds[i]),
      url: flat.strings[flat.urlIds[i]!] ?? '',
      lineNumber: flat.lines[i]!,
      columnNumber: flat.columns[i]!,
    };
    this.rememberOrRecall(cf);
    return this.callFrameNumber(cf);
  }

  private callFrameNumber(cf: CpuProfileCallFrame): number {
    const key = callFrameKey(cf);
    let n = this.frameNumbers.get(key);
    if (n === undefined) {
      n = this.stacks.callFrames.length;
      if (n >= FRAME_KEY_SPAN)
        throw new ProfpackError(`heap recording: more than ${FRAME_KEY_SPAN} distinct call frames`, {
          code: ErrorCode.RECORD_FAILED,
        });
      this.frameNumbers.set(key, n);
      this.stacks.callFrames.push(cf);
      this.ownFrames.push(this.isOwnUrl(cf.url));
    }
    return n;
  }

  private rememberOrRecall(cf: CpuProfileCallFrame): void {
    const script = String(cf.scriptId);
    if (script === '0') return;
    const place = `${script}\0${cf.functionName}`;
    if (cf.url !== '') this.scriptUrls.set(script, cf.url);
    else cf.url = this.scriptUrls.get(script) ?? '';
    if (cf.lineNumber >= 0) {
      const known = this.placeOfFunction.get(place);
      if (known === undefined) this.placeOfFunction.set(place, { line: cf.lineNumber, column: cf.columnNumber });
      else if (known !== null && (known.line !== cf.lineNumber || known.column !== cf.columnNumber))
        this.placeOfFunction.set(place, null);
    } else {
      const known = this.placeOfFunction.get(place);
      if (known) {
        cf.lineNumber = known.line;
        cf.columnNumber = known.column;
      }
    }
  }

  private stackId(parent: number, frame: number): number {
    const key = (parent + 1) * FRAME_KEY_SPAN + frame;
    let id = this.stackIds.get(key);
    if (id === undefined) {
      id = this.stacks.add(parent, frame);
      this.stackIds.set(key, id);
      if (id >= this.ownStacks.length) {
        this.ownStacks = resized(this.ownStacks, this.ownStacks.length * 2);
      }
      this.ownStacks[id] = this.isOwn(parent) || this.ownFrames[frame] === true ? 1 : 0;
    }
    return id;
  }

  /**
   * Each node's stack id (by V8 node id; the map may hold nodes gone since). The
   * head is V8's "(root)", not a frame of the program: its stack is -1, and its
   * children are outermost frames.
   */
  numberFlat(flat: FlatHeapProfile): ReadonlyMap<number, number> {
    const n = flat.nodeIds.length;
    if (this.stackOfNode.size > STALE_NODE_FACTOR * n + 1024) {
      const present = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        const stack = this.stackOfNode.get(flat.nodeIds[i]!);
        if (stack !== undefined) present.set(flat.nodeIds[i]!, stack);
      }
      this.stackOfNode = present;
    }
    const byNode = this.stackOfNode;
    for (let i = 0; i < n; i++) {
      const id = flat.nodeIds[i]!;
      if (byNode.has(id)) continue;
      const parent = flat.parentIds[i]!;
      if (parent === NO_PARENT) {
        byNode.set(id, -1);
        continue;
      }
      const parentStack = byNode.get(parent);
      if (parentStack === undefined)
        throw new ProfpackError(`heap recording: allocation node ${id} came before its parent ${parent}`, {
          code: ErrorCode.RECORD_FAILED,
        });
      byNode.set(id, this.stackId(parentStack, this.frameNumber(flat, i)));
    }
    return byNode;
  }

  /** The stack id of call frames outermost first (-1: none), for stacks taken outside V8's sampler (external.ts). */
  numberCallFrames(frames: readonly CpuProfileCallFrame[]): number {
    let stack = -1;
    for (const cf of frames) stack = this.stackId(stack, this.callFrameNumber(cf));
    return stack;
  }

  /** numberFlat() of a tree as the inspector sends it. */
  number(head: SamplingHeapNode): ReadonlyMap<number, number> {
    return this.numberFlat(flattenHeapTree(head));
  }

  /** The frames and stacks numbered since the last call (what the pipe has not carried yet). */
  takeNew(): { frames: CpuProfileCallFrame[]; stackParents: Int32Array; stackFrames: Uint32Array } {
    const frames = this.stacks.callFrames.slice(this.sentFrames);
    const count = this.stacks.size - this.sentStacks;
    const stackParents = new Int32Array(count);
    const stackFrames = new Uint32Array(count);
    for (let i = 0; i < count; i++) {
      stackParents[i] = this.stacks.parentOf(this.sentStacks + i);
      stackFrames[i] = this.stacks.frameOf(this.sentStacks + i);
    }
    // By what was taken, not the table's size now: the typed arrays above may be sampled as external allocations
    // (external.ts), adding a stack while this runs; it goes with the next frame.
    this.sentFrames += frames.length;
    this.sentStacks += count;
    return { frames, stackParents, stackFrames };
  }
}
