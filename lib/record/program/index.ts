/**
 * What runs inside the recorded program, and loads no writer code: V8's sampler, the agent that harvests it into
 * WireChunks for a target, the worker agent, the pipe to a writer elsewhere (and that writer process's spawn).
 */
export {
  checkAgentOptions,
  startAgent,
  type AgentOptions,
  type AgentSettings,
  type ChunkTarget,
  type Recording,
  type RecordingSummary,
  type TimedWork,
} from './agent';
export {
  announceUnrecordedWorker,
  defaultChannelName,
  startWorkerAgent,
  unrecordedChannelName,
  warnOfWorkers,
  type WorkerChunkMessage,
  type WorkerHeapLostMessage,
  type WorkerHeapMessage,
  type WorkerMessage,
} from './worker-agent';
export { recordOverPipe, type PipeEnd } from './pipe';
export { asRecorderWork } from './own-work';
export { V8Sampler } from './cpu-sampler';
export { describeThisProcess, encodeRecordedBy, type RecordedBy } from './recorded-by';
export {
  HeapRecorder,
  driveHarvests,
  INSPECTOR_POLL_SHARES,
  NATIVE_POLL_SHARE,
  NATIVE_POLL_SHARES,
  POLL_CPU_SHARE,
  POLL_HEADROOM_SHARE,
  POLL_WALL_SHARE,
  timedPollDue,
  type PollPace,
  type PollShares,
} from './heap-recorder';
