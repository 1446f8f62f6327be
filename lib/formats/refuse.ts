/**
 * The profiles people bring that profpack does not read, recognised from
 * their first 4 KiB (gzip undone by the registry) and refused naming what
 * they are: a "not a .cpuprofile" message about a Firefox profile helps
 * nobody. None of them starts as a format of registry.ts's ADAPTERS does.
 */
import { detectJsonKeys, firstNonSpace, headText as text } from './sniff';

const GO_LEGACY = /^(?:--- (?:contention|mutex|threadz)\b|heap profile: |(\w+) profile: total \d+)/;

/** What a head is, among the files people bring that profpack refuses; undefined when none. */
export function refusal(head: Uint8Array): string | undefined {
  if (head.length === 0) return undefined;
  // CPython's pstats output (profiling.sampling --pstats, cProfile): marshal of a dict, 0xfb (or 0x7b) then a tuple.
  if ((head[0] === 0xfb || head[0] === 0x7b) && [0x28, 0x29, 0xa8, 0xa9, 0x30].includes(head[1] ?? -1))
    return 'CPython pstats (marshal) output';
  const at = firstNonSpace(head);
  const start = text(head.subarray(at, at + 512));
  const goMatch = GO_LEGACY.exec(start);
  if (goMatch !== null) {
    const kind = goMatch[1] ?? start.split(/[:\n]/, 1)[0]!.replace(/^--- /, '');
    return `a Go legacy text profile (${kind}); write it with debug=0 (profile.proto) instead`;
  }
  if (head[at] === 0x5b /* [ */) {
    // A bare JSON array of trace events (Chrome's Performance panel, --trace-event files).
    if (/^\[\s*\{[^]*?"ph"\s*:/.test(start) || /^\[\s*\{[^]*?"(?:ts|pid|tid)"\s*:[^]*?"ph"/.test(start))
      return 'Chrome trace events (a JSON array of events)';
    return undefined;
  }
  const firstLine = start.split('\n', 1)[0]!;
  if (/^\{\s*"type"\s*:\s*"meta"/.test(firstLine) && firstLine.includes('"run_id"'))
    return "CPython profiling.sampling's JSON Lines (--jsonl) output";
  const keys = detectJsonKeys(head);
  if (keys === undefined) return undefined;
  if (keys.has('traceEvents')) return 'Chrome trace events (traceEvents JSON)';
  if (
    keys.has('meta') &&
    (keys.has('threads') || keys.has('libs')) &&
    (keys.has('interval') || keys.has('processes') || keys.has('markerSchema') || keys.has('product'))
  ) {
    return 'a Firefox profiler (Gecko) JSON profile';
  }
  // Its "ticks" come after megabytes of "code" entries: the head shows code entries of V8's kinds.
  if (keys.has('code') && (keys.has('ticks') || /"type"\s*:\s*"(?:SHARED_LIB|CPP|JS|CODE)"/.test(text(head))))
    return "node --prof-process --preprocess output (V8's tick log as JSON)";
  if (keys.has('snapshot') && keys.has('node_fields'))
    return 'a V8 heap snapshot (.heapsnapshot), not a sampling profile';
  if (keys.has('profiles') && /"type"\s*:\s*"evented"/.test(text(head)) && !/"type"\s*:\s*"sampled"/.test(text(head)))
    return 'a speedscope file of "evented" profiles (what speedscope\'s Export writes)';
  return undefined;
}
