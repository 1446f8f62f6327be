/**
 * Between a recorded process and the process that writes its file, what both ends share: the two encodings side by
 * side, a CPU harvest's (cpu.ts) and a heap poll's (heap.ts, its events heap-events.ts), the pipe's framing and its
 * sender, the writer process's settings and answers, the clocks.
 */
export { HarvestEncoder, samplesInTimeOrder, type WireChunk } from './cpu';
export { FrameParser, MAX_FRAME_BYTES, encodeFrame, type WireMessage } from './framing';
export { FdSender, SEND_STALL_MS } from './sender';
export { epochOffsetUs, recordingClock } from './clock';
export {
  FILE_LINE,
  decodeWriterSettings,
  encodeFileLine,
  encodeWriterSettings,
  type WriterProcessSettings,
} from './writer-process';

export {
  type HeapAllocationBatch,
  type HeapEventSink,
  type HeapFreeBatch,
  type HeapMemorySample,
  type HeapRecordingInfo,
  HeapStacks,
  NO_STACK,
} from './heap-events';
export {
  HEAP_FRAME_FLAG,
  HeapFrameReceiver,
  encodeHeapFrame,
  type ExternalPoll,
  type HeapFramePoll,
  type HeapFrameStacks,
  type PollMemory,
} from './heap';
