export * from './batch-get';
export { putItems } from './batch-write';
export * from './client';
export { createTableIfMissing } from './create-table';
export * from './definition';
export * from './keys';
export { type PartitionQuery, queryAll, queryPages } from './query';
export { retryOnConflict, StaleVersionError } from './retry';
export * from './transact';
