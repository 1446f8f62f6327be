/**
 * The public `v2` namespace (format version 2, docs/format-v2.md):
 * the codings of v2/, and the file-level API gathered from where it lives
 * (read/ decodes files, write/ writes them, downgrade.ts converts them).
 */
export * from './codec/index';
export {
  readProfileV2,
  openProfileV2,
  isVersion2,
  stackCodingOf,
  type V2Info,
  type V2Profile,
  type V2ReadOptions,
  type V2SampleChunk,
} from './read/index';
export { V2FileWriter, type V2WriterOptions, type V2Stats } from './write/index';
export { replayIntoVersion1, frameSpecOf, type Version1Sink } from './downgrade';
