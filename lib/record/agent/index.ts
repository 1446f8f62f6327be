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
} from './worker';
export { recordOverPipe, type PipeEnd } from './pipe';
export { V8Sampler } from './sampler';
export { describeThisProcess, encodeRecordedBy, type RecordedBy } from './recorded-by';
