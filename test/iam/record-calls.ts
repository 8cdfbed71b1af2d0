import { installRecorder } from './recorder';

/** A vitest setup file: every test file's AWS calls in a function's scope are recorded. */
installRecorder();
