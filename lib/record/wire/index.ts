/** The pipe between a recorded process and the process that writes its file: what both ends share. */
export {
  FdSender,
  FrameNumbers,
  FrameParser,
  MAX_FRAME_BYTES,
  SEND_STALL_MS,
  encodeFrame,
  type WireMessage,
  type WireProfile,
} from './framing';
