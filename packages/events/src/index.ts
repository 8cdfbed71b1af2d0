export * from './names';
export * from './outbox';
