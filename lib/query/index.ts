/** Queries over a profile's sample stream. */
export {
  aggregate,
  formatTable,
  rowName,
  STATUS_FILTERS,
  type AggregateBy,
  type AggregateOptions,
  type AggregateResult,
  type AggregateRow,
  type SortBy,
} from './aggregate';
