import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The one logger. Never pass request bodies, secrets, tokens or card data to it: log ids,
 * routes and outcomes only.
 */
export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'svc',
  logLevel: (process.env.POWERTOOLS_LOG_LEVEL as 'INFO' | 'WARN' | 'ERROR' | 'DEBUG' | undefined) ?? 'INFO',
});
