import { beforeAll } from 'vitest';

// Tests call domain code directly as well as through the gateway: wired as every entry is. In a
// hook, so the test file's own modules (and its vi.mock replacements) load first and the wiring
// reuses them.
beforeAll(async () => {
  const { wireDomains } = await import('@svc/api/wiring');
  wireDomains();
});
