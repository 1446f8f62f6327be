/** Views a person opens: the flame graph and timeline page, and the diff of two profiles. */
export { flame, renderFlameHtml, type FlameOptions, type FlameSummary } from './flame';
export {
  diff,
  diffSources,
  diffProfiles,
  diffTree,
  formatDiffTable,
  type DiffOptions,
  type DiffFileOptions,
  type DiffResult,
  type DiffRow,
  type DiffNode,
} from './diff';
export { buildViewData, statusClass, StatusClass, type ViewData, type ViewDataOptions, type ViewFunc } from './tree';
export { buildHeapViewData, heapFlame, renderHeapFlameHtml, type HeapViewData, type HeapViewOptions } from './heap';
