import { StageConfigurationError } from '../config/stages';
import { createServiceApp } from '../stacks/service-app';

try {
  createServiceApp().app.synth();
} catch (error) {
  // What the operator must set, without a stack trace in the way.
  if (!(error instanceof StageConfigurationError)) throw error;
  console.error(error.message);
  process.exit(1);
}
