/** `startRecording()`: this process's JS stacks, recorded with V8's sampler into a file or a sink. */
export { startRecording, type Recording, type RecordingOptions, type RecordingSummary } from './start-recording';
// For the launch (lib/record/launch), which loads this module only when it records in the program.
export { asRecorderWork } from '../program/index';
