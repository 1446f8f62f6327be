/** The writer end of a recording: harvests into a Tachyon file (in the writer process, `profpack record` or inline). */
export { RecordingHost, type HeapSummary, type HostSummary, type RecordingHostOptions } from './host';
export { ChunkIngester } from './cpu-ingest';
export { createTachyonSink, type TickSink, type TachyonSink, type TachyonSinkOptions } from './tachyon-sink';
export { RotationFiles } from './rotation';
