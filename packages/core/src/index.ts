export * from './clock';
export * from './errors';
export * from './ids';
export { logger } from './logger';
export * from './money';
export * from './principal';
export { uuidSchema } from './schemas';
export * from './secret-hash';
export { issuesToDetails, parseOrThrow } from './validation';
