// lib/tachyon/read/v2: the reader's version-2 path (docs/format-v2.md): files decoded whole or by ranges.
export {
  type V2Info,
  type V2Profile,
  type V2ReadOptions,
  type V2SampleChunk,
  isVersion2,
  openProfileV2,
  readProfileV2,
  stackCodingOf,
} from './file';
export { type V2Cursor, checkFrameIndex, isProfpackVersion2, v2Frames, v2Replay, v2Samples, walk } from './view';
