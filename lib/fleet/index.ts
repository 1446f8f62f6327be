/** Many profiles: a fleet's files as one stream, merged into one file, or as tables for DuckDB and Parquet. */
export { listProfileFiles, openProfiles, warnSkipped, type FleetSource, type ListedFiles } from './source';
export { mergeProfiles, type MergeOptions, type MergeResult } from './merge';
export { exportParquet, type ExportOptions, type ExportResult } from './export';
export {
  querySql,
  openSqlQuery,
  formatSqlTable,
  formatSqlCsv,
  csvLine,
  jsonRowText,
  sqlRowObjects,
  type SqlResult,
  type SqlStream,
  type SqlOptions,
} from './sql';
export { SCHEMA as FLEET_SCHEMA, TABLE_NAMES as FLEET_TABLES, profileId, type LoadOptions } from './tables';
export { EXAMPLE_QUERIES, CLICKHOUSE_QUERIES } from './queries';
export {
  exportClickHouse,
  queryClickHouse,
  clickhouseColumns,
  type ClickHouseExportOptions,
  type ClickHouseExportResult,
} from './clickhouse';
