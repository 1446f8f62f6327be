export {
  NO_HEAP_STACK,
  unsampledWeight,
  type HeapTraceMeta,
  type HeapLiveAtStart,
  type HeapAllocEvents,
  type HeapFreeEvents,
  type HeapEventBatch,
  type HeapTraceSource,
} from './trace';
export { HeapTraceCollector } from './collect';
