// lib/tachyon/codec/heap: version 2's heap section (docs/format-v2.md §9): framing, coder, decoder, live
// lists, bounds.
export { HeapSectionDecoder, decodeHeapTotals } from './decode';
export { HeapSectionEncoder } from './encode';
export { HeapRecordFlag, type HeapTotals, encodeHeapChunk, encodeHeapHeader } from './format';
export { HeapQueryBudget } from './limits';
