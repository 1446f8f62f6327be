/** `startRecording()` and `startWorkerAgent()`: this process's JS stacks, recorded with V8's sampler. */
export {
  defaultChannelName,
  startRecording,
  startWorkerAgent,
  type Recording,
  type RecordingOptions,
  type RecordingSummary,
  type WorkerChunkMessage,
  type WriterProcessSettings,
} from './recorder';
