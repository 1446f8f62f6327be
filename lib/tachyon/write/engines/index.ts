// lib/tachyon/write/engines: ProfileWriter's sample engines behind one contract (JS, native, version 2).
export {
  COUNTER_COUNT,
  Counter,
  type EngineOptions,
  STAGED_HEADER,
  type SampleEngine,
  StackRecord,
  TICK_HEADER,
  TickRecord,
  ThreadMap,
  deepStacks,
  unknownFrameId,
  writerStats,
} from './contract';
export { JsSampleEngine } from './js';
export { NativeSampleEngine } from './native';
export { createV2Engine } from './v2';
