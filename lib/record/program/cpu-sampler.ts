/**
 * V8's own CPU sampler, driven in-process through `node:inspector`, harvested
 * in chunks without ever stopping it.
 *
 * The DevTools Profiler domain has one frontend profile (`Profiler.start` /
 * `stop`), and stopping the last running profile disposes V8's CpuProfiler:
 * the next start builds a new one and re-logs every compiled function, and
 * samples taken in between are lost. Console profiles, which the same agent
 * runs when `Profiler.enable` was sent (V8's V8ProfilerAgentImpl::consoleProfile),
 * can overlap. So each harvest starts the next console profile first and only
 * then ends the current one (its data arrives synchronously in
 * `Profiler.consoleProfileFinished`): the profiler never stops, no sample is
 * missed, and V8 adds every tick to all running profiles with the same
 * timestamp, so the few samples both chunks hold are dropped by time
 * (ChunkIngester). Memory is one harvest interval of samples.
 */
import type * as inspector from 'node:inspector';
import { postSync, type CpuProfile } from '../../v8/index';

let nextId = 0;

export class V8Sampler {
  // Required here: a heap-only recording never makes one, and loads no node:inspector.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  private readonly inspector = require('node:inspector') as typeof inspector;
  private readonly session = new this.inspector.Session();
  private current: string | undefined;
  private finished: CpuProfile | undefined;
  private readonly prefix = `profpack-${process.pid}-${Date.now().toString(36)}-${nextId++}-`;
  private seq = 0;

  constructor(readonly intervalUs: number) {
    this.session.connect();
    this.session.on(
      'Profiler.consoleProfileFinished',
      (message: { params: { title?: string; profile: CpuProfile } }) => {
        if (message.params.title?.startsWith(this.prefix)) this.finished = message.params.profile;
      },
    );
    this.post('Profiler.enable');
    this.post('Profiler.setSamplingInterval', { interval: Math.max(1, Math.round(intervalUs)) });
  }

  private post(method: string, params?: object): void {
    postSync(this.session, method, params);
  }

  start(): void {
    this.current = this.prefix + this.seq++;
    this.inspector.console.profile(this.current);
  }

  /** Ends the running chunk and returns it; with `restart` the next chunk has already begun. */
  harvest(restart = true): CpuProfile | undefined {
    const ending = this.current;
    if (ending === undefined) return undefined;
    if (restart) this.start();
    else this.current = undefined;
    this.finished = undefined;
    this.inspector.console.profileEnd(ending);
    const chunk = this.finished;
    this.finished = undefined;
    return chunk;
  }

  dispose(): void {
    if (this.current !== undefined) this.harvest(false);
    try {
      this.post('Profiler.disable');
    } catch {
      // The session may already be gone at process exit.
    }
    this.session.disconnect();
  }
}
