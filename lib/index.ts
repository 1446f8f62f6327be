/** profpack's public API. */
export { ProfpackError, ErrorCode, isProfpackError, type ProfpackErrorOptions } from './errors';
export { backend, type Backend, type BackendFeatures, type BackendName } from './backend';
export * as varint from './varint/index';
export * as svb from './svb/index';
export { PcTable, PcTableSet, decodeVarintTable, lookupVarint, type VarintRun, type VarintHit, type PcTableOptions, type LookupManyOptions } from './pctable/index';
export * as v2 from './tachyon/v2/index';
