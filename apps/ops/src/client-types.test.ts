import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_TYPES, clientTypes } from './client-types';

describe('@svc/client types', () => {
  it('are what the API description generates today (run `pnpm client:generate` after changing a schema)', async () => {
    expect(readFileSync(CLIENT_TYPES, 'utf8') === (await clientTypes())).toBe(true);
  }, 60_000);
});
