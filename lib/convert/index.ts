/** The neutral profile model and converters to and from the formats people use. */
export * from './model';
export { toCpuProfile, fromCpuProfile, frameFromV8, statusForV8Leaf, THREAD_FRAME_URL, type CpuProfile, type CpuProfileNode, type CpuProfileCallFrame } from './cpuprofile';
export { toPprof, toPprofProfile, PprofLabel, NOT_EPOCH_COMMENT, type ToPprofOptions } from './pprof';
export { fromPprof, type FromPprofOptions, type PprofSource } from './pprof-read';
export { toCollapsed, fromCollapsed } from './collapsed';
export { toSpeedscope, fromSpeedscope, SPEEDSCOPE_SCHEMA, type SpeedscopeFile } from './speedscope';
export { convert, openProfile, parseProfile, serializeProfile, detectFormat, formatFromPath, isProfileFormat, PROFILE_FORMATS, type ProfileFormat, type ConvertOptions, type ConvertSummary, type SerializeOptions, type ParseOptions } from './convert';
export { openTachyon, createTachyonSink, type TachyonSink, type TachyonSource, type TachyonSinkOptions } from './tachyon';
