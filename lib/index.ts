/** profpack's public API. */
export { ProfpackError, ErrorCode, isProfpackError, type ProfpackErrorOptions } from './errors';
export { backend, type Backend, type BackendFeatures, type BackendName } from './backend';
export * as varint from './varint/index';
// The writer's input shapes are exported as Sample*: ProfileReader's InterpreterInfo/ThreadInfo are what a replay
// delivers.
export { ProfileWriter } from './profile-writer';
export {
  type ProfileWriterOptions,
  type SampleInterpreterInfo,
  type SampleThreadInfo,
  type SampleFrameInfo,
  type SampleLocationInfo,
  type FrameSpec,
  type StackTick,
  type WriterStats,
  type WriterState,
} from './tachyon/index';
// The profile model: typed, weighted, labelled samples in columnar batches; one adapter per format.
export {
  ProfileBuilder,
  StackTable,
  SampleTypes,
  NodeStatus,
  chooseSampleType,
  formatValue,
  sampleTypeName,
  type ProfileSource,
  type ProfileMeta,
  type SampleBatch,
  type SampleType,
  type Label as ModelLabel,
  type ThreadRef,
  type Frame as ModelFrame,
} from './profile/index';
export {
  convert,
  openProfile,
  readProfile,
  writeProfile,
  detectFormat,
  formatFromPath,
  FORMAT_NAMES,
  FORMAT_NAMES as PROFILE_FORMATS,
  type FormatName,
  type FormatName as ProfileFormat,
  type ConvertOptions,
  type ConvertSummary,
  type OpenOptions,
  type WriteOptions,
} from './formats/index';
// Compatibility (lib/compat): lib/convert's names from before the profile model change, deprecated shims.
export {
  MemoryProfile,
  copyProfile,
  toPprof,
  fromPprof,
  toCpuProfile,
  fromCpuProfile,
  toCollapsed,
  fromCollapsed,
  toSpeedscope,
  fromSpeedscope,
  openTachyon,
  createTachyonSink,
  parseProfile,
  serializeProfile,
  type ModelSample,
  type ProfileSink,
  type LegacyProfileMeta,
  type LegacyProfileSource,
  type CompatSource,
  type TachyonCompatSource,
} from './compat/index';
export {
  aggregate,
  formatTable,
  STATUS_FILTERS,
  type AggregateOptions,
  type AggregateResult,
  type AggregateRow,
} from './query/index';
export {
  startRecording,
  startWorkerAgent,
  type Recording,
  type RecordingOptions,
  type RecordingSummary,
} from './record/index';
export * as svb from './svb/index';
export {
  PcTable,
  PcTableSet,
  decodeVarintTable,
  lookupVarint,
  type VarintRun,
  type VarintHit,
  type PcTableOptions,
  type LookupManyOptions,
} from './pctable/index';
export {
  ProfileReader,
  type ReaderOptions,
  type Sample,
  type Collector,
  type TypedCollector,
  type InterpreterInfo,
  type ThreadInfo,
  type ReplayOptions,
  type ReplayStats,
  type Frame,
  type ProfileInfo,
} from './tachyon/index';
export { v2 } from './tachyon/index';
export { downgrade, type DowngradeOptions, type DowngradeResult } from './tachyon/index';
// views: flame graph and timeline page, diff of two profiles
export {
  flame,
  renderFlameHtml,
  diff,
  diffProfiles,
  diffTree,
  formatDiffTable,
  buildViewData,
  type FlameOptions,
  type FlameSummary,
  type DiffOptions,
  type DiffFileOptions,
  type DiffResult,
  type DiffRow,
  type DiffNode,
  type ViewData,
} from './view/index';
// Many profiles: one stream over many files, merge, Parquet export and SQL through DuckDB; rotating
// recordings.
export {
  listProfileFiles,
  openProfiles,
  mergeProfiles,
  exportParquet,
  exportClickHouse,
  queryClickHouse,
  querySql,
  formatSqlTable,
  formatSqlCsv,
  sqlRowObjects,
  EXAMPLE_QUERIES,
  CLICKHOUSE_QUERIES,
  FLEET_SCHEMA,
  FLEET_TABLES,
  profileId,
  type FleetSource,
  type MergeOptions,
  type MergeResult,
  type ExportOptions,
  type ExportResult,
  type ClickHouseExportOptions,
  type ClickHouseExportResult,
  type SqlResult,
  type LoadOptions as FleetLoadOptions,
} from './fleet/index';
export { type RotateOptions, type RotatedFileStats, type OnFile } from './record/index';

export { recover, type RecoverOptions, type RecoverResult } from './tachyon/index';

// Reading limits (docs/reliability.md)
export { MAX_TIMESTAMPS_PER_COLLECT } from './tachyon/index';
export { DEFAULT_MAX_SAMPLES } from './formats/index';
