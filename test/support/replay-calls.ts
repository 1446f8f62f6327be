/** What a reader's replay() hands its collector, kept call by call for a test to compare. */
import type { Collector } from '../../lib/tachyon/index';

/** One collect() call: CPython's shape, one interpreter with one thread, frames innermost first. */
export interface CollectCall {
  interpreterId: number;
  threadId: bigint;
  status: number;
  funcs: string[];
  ts: bigint[];
}

/** A collector for files of one thread per sample, and the calls it got, in order. */
export function recordCalls(): { collector: Collector; calls: CollectCall[] } {
  const calls: CollectCall[] = [];
  const collector: Collector = {
    collect(stackFrames, ts) {
      const [interp] = stackFrames;
      const [thread] = interp!.threads;
      calls.push({
        interpreterId: interp!.interpreterId,
        threadId: thread!.threadId,
        status: thread!.status,
        funcs: thread!.frameInfo.map((f) => f.funcname),
        ts: [...ts],
      });
    },
  };
  return { collector, calls };
}
