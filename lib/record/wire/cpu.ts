/**
 * A harvest as it goes from the recorded program to its writer: the one place a V8 profile changes shape on the
 * way to disk. The sender (HarvestEncoder, in the recorded program or beside an inline writer) puts the samples in
 * time order once, gives each its hot line, drops the ticks its thread's earlier harvest already had, and numbers
 * each call frame once per sender. The writer (lib/record/writer ChunkIngester) walks what it gets as it comes.
 *
 * V8 sends every node's call frame again in every harvest; a long program's one big harvest was ~5 MB of JSON,
 * mostly repeated call frames, which the writer parsed and keyed again: numbers cross instead.
 */
import { callFrameKey, sampleLines, type CpuProfile, type CpuProfileCallFrame } from '../../v8/index';

export interface WireChunk {
  /** Call frames first seen in this harvest: they take the next numbers, from 0 for each sender. */
  newFrames: CpuProfileCallFrame[];
  /** Per node: its parent's index (-1: a root). */
  parents: number[];
  /** Per node: its call frame's number. */
  frames: number[];
  /** Per sample, in time order, only those newer than its thread's earlier harvests: its node's index (-1: none). */
  samples: number[];
  /** Per sample: µs after the one before it (the first: 0); never negative. */
  timeDeltas: number[];
  /** The first sample's time: whole µs on V8's clock (CLOCK_MONOTONIC). */
  startTime: number;
  /** Per sample: its line from V8's positionTicks (1-based), 0 for the function's own; absent when none has one. */
  lines?: number[];
}

/** Turns one sender's harvests into WireChunks: frame numbers, and each thread's newest tick sent. */
export class HarvestEncoder {
  private readonly numbers = new Map<string, number>();
  private readonly newest = new Map<number, bigint>();
  /** Samples encoded so far (what the writer writes). */
  samples = 0;

  /**
   * One harvest of a thread; undefined when it holds no tick newer than the thread's earlier harvests. Two
   * overlapping harvests share a few ticks (lib/record/program/cpu-sampler.ts): they are sent once.
   */
  encode(profile: CpuProfile, threadId: number): WireChunk | undefined {
    const { order, times } = samplesInTimeOrder(profile);
    const after = this.newest.get(threadId);
    const fresh = after === undefined ? order : order.filter((i) => times[i]! > after);
    if (fresh.length === 0) return undefined;
    const nodes = profile.nodes ?? [];
    const index = new Map<number, number>();
    for (let i = 0; i < nodes.length; i++) index.set(nodes[i]!.id, i);
    const parents = new Array<number>(nodes.length).fill(-1);
    const frames = new Array<number>(nodes.length);
    const newFrames: CpuProfileCallFrame[] = [];
    let lineTicks: Record<number, number[]> | undefined;
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      for (const child of node.children ?? []) {
        const c = index.get(child);
        if (c !== undefined) parents[c] = i;
      }
      const cf = node.callFrame;
      const key = callFrameKey(cf);
      let n = this.numbers.get(key);
      if (n === undefined) {
        n = this.numbers.size;
        this.numbers.set(key, n);
        newFrames.push(cf);
      }
      frames[i] = n;
      const ticks = node.positionTicks;
      if (ticks !== undefined && ticks.length > 0) (lineTicks ??= {})[i] = ticks.flatMap((t) => [t.line, t.ticks]);
    }
    const nodeOf = (profile.samples ?? []).map((id) => index.get(id) ?? -1);
    // Every tick of the harvest takes its line, the shared ones too: V8 counted them in this harvest's ticks.
    const lines = lineTicks === undefined ? undefined : sampleLines(nodeOf, order, lineTicks);
    let previous = times[fresh[0]!]!;
    const chunk: WireChunk = { newFrames, parents, frames, samples: [], timeDeltas: [], startTime: Number(previous) };
    for (const i of fresh) {
      chunk.samples.push(nodeOf[i]!);
      chunk.timeDeltas.push(Number(times[i]! - previous));
      previous = times[i]!;
    }
    if (lines !== undefined && fresh.some((i) => lines[i] !== 0)) chunk.lines = fresh.map((i) => lines[i]!);
    this.newest.set(threadId, previous);
    this.samples += fresh.length;
    return chunk;
  }
}

/**
 * Every sample's time (µs, V8's clock) and the samples' indices in time order, ties as V8 listed them. V8
 * occasionally records a tick a few µs before the previous one (negative timeDeltas; DevTools sorts them too).
 */
export function samplesInTimeOrder(chunk: Pick<CpuProfile, 'samples' | 'timeDeltas' | 'startTime'>): {
  order: number[];
  times: bigint[];
} {
  const samples = chunk.samples ?? [];
  const deltas = chunk.timeDeltas ?? [];
  const times = new Array<bigint>(samples.length);
  let time = BigInt(Math.round(chunk.startTime));
  for (let i = 0; i < samples.length; i++) {
    time += BigInt(Math.round(deltas[i] ?? 0));
    times[i] = time;
  }
  const order = Array.from(times.keys());
  order.sort((a, b) => (times[a]! < times[b]! ? -1 : times[a]! > times[b]! ? 1 : a - b));
  return { order, times };
}
