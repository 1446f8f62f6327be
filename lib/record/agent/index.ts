/** What runs inside the recorded program: V8's sampler, the note on what recorded, the writer process's spawn. */
export { V8Sampler } from './sampler';
export { describeThisProcess, encodeRecordedBy, type RecordedBy } from './recorded-by';
export { spawnWriterProcess, type WriterProcess, type WriterProcessSettings } from './spawn-writer';
