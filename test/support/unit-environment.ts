import { useTestEnvironment } from './test-environment';

/**
 * The unit project's environment: every test file's, but the table's endpoint answers nothing
 * (unitSetup in global-setup.ts) and no table is made, so code that reaches DynamoDB fails the test.
 */
useTestEnvironment('unit');
