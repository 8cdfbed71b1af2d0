export { API_INFO } from './api-description';
export { describeApi } from './api-document';
export {
  API_EXAMPLES,
  type ApiExamples,
  type OperationExample,
  pathParameters,
  UNLISTED_STATUSES,
  WITHOUT_EXAMPLE,
  withExamples,
} from './api-examples';
export {
  API_URL_OUTPUT,
  CAPTCHA_SECRET_OUTPUT,
  DEAD_LETTER_QUEUE_OUTPUTS,
  type DeadLetterQueueName,
  PREWARM_OUTPUTS,
  PREWARM_SCHEDULE_OUTPUTS,
  SEARCH_CLUSTER_OUTPUT,
  SEARCH_SECRET_OUTPUT,
  STRIPE_SECRET_OUTPUT,
  stackName,
  TABLE_NAME_OUTPUT,
} from './deployment';
export { DOCS_ASSETS } from './docs-page';
export { DOMAINS, type DomainName, WORKERS, type WorkerName } from './domains';
export { ENTITIES } from './entities';
export { platformBundling } from './platform-bundle';
export { RECEIPT_FONT_FILES, RECEIPT_PAYMENT_EVENTS } from './receipts-parts';
export { allRoutes, platformRoutes, ROUTE_TABLE, type RouteEntry } from './route-table';
export { SEARCH_PROJECTIONS } from './search-projections';
export { carriesEvents, publisherTakes, QUIET_ENTITIES, STREAM_PUBLISHER_FILTER } from './stream-filter';
export { wireDomains } from './wiring';
