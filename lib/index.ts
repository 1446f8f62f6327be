/** profpack's public API. */
export { ProfpackError, ErrorCode, isProfpackError, type ProfpackErrorOptions } from './errors';
export { backend, type Backend, type BackendFeatures, type BackendName } from './backend';
export * as varint from './varint/index';
export { ProfileWriter, type ProfileWriterOptions, type InterpreterInfo, type ThreadInfo, type FrameInfo, type LocationInfo, type FrameSpec, type StackTick, type WriterStats, type WriterState } from './tachyon/writer';
