/** `startRecording()`: this process's JS stacks, recorded with V8's sampler into a file or a sink. */
export { startRecording, type Recording, type RecordingOptions, type RecordingSummary } from './start-recording';
