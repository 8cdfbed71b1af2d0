export * from './batch-get';
export { putItems } from './batch-write';
export * from './client';
export { createTableIfMissing } from './create-table';
export * from './definition';
export {
  accessPatternsMarkdown,
  byUuid,
  type DescribedEntity,
  defineEntity,
  documentStorage,
  type Entity,
  type EntityDescription,
  type EntityIndex,
  type EntityStorage,
} from './entity';
export * from './keys';
export { type PartitionQuery, queryAll, queryPages } from './query';
export { retryOnConflict, StaleVersionError } from './retry';
export {
  type MergedQuery,
  mergedItems,
  mergedPages,
  queryMerged,
  shardedPartition,
  shardOf,
  shardPartitions,
} from './shards';
export * from './transact';
