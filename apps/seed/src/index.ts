export { DEMO_SEED } from './demo-seed';
export * from './seed';
