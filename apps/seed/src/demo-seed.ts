import demo from './demo-seed.json';

/** The built-in demo seed (README lists its credentials). Local use only. */
export const DEMO_SEED: unknown = demo;
