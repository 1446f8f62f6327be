/** Profile formats: one adapter per format behind a registry, and convert() between any two. */
export type { FormatAdapter, ReadInput, ReadOptions, WriteOptions, WriteTarget } from './adapter';
export {
  ADAPTERS,
  FORMAT_NAMES,
  formatLabels,
  recognize,
  type FormatName,
  type Recognized,
  isFormatName,
  adapterFor,
  formatFromPath,
  detectFormat,
  readProfile,
  openProfile,
  writeProfile,
  type OpenOptions,
  type OpenedProfile,
} from './registry';
export { MAX_VERSION1_TICKS, tachyonRecordedBy } from './tachyon/index';
export { convert, DEFAULT_MAX_SAMPLES, type ConvertOptions, type ConvertSummary } from './convert';
