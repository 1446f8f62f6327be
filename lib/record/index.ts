/** Recording this process's JS stacks with V8's sampler into Tachyon. */
export { startRecording, startWorkerAgent, defaultChannelName, type Recording, type RecordingOptions, type RecordingSummary } from './recorder';
export { V8Sampler } from './sampler';
export { ChunkIngester } from './ingest';
export { RecordEnv } from './preload-env';
export { runRecorded, PRELOAD_PATH, type RunRecordedOptions, type RunRecordedResult } from './run';
