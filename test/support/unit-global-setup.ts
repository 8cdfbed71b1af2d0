// The unit project's global setup (see unitSetup).
export { unitSetup as default } from './global-setup';
