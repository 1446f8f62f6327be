/**
 * Between a recorded process and the process that writes its file, what both ends share: a harvest's shape on its
 * way (chunk.ts), the pipe's framing and its sender, the writer process's settings and answers, the clocks.
 */
export { HarvestEncoder, samplesInTimeOrder, type WireChunk } from './chunk';
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
