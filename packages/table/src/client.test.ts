import { SDK_LOGGER_MIDDLEWARE } from '@svc/core';
import { describe, expect, it } from 'vitest';
import { db } from './client';

describe('the table client', () => {
  it('skips the SDK logger middleware (it formats every call for a logger that discards it)', () => {
    const names = db().middlewareStack.identify();
    expect(names.some((name) => name.startsWith('serializerMiddleware') || name.includes('Serializer'))).toBe(true);
    expect(names.some((name) => name.startsWith(SDK_LOGGER_MIDDLEWARE))).toBe(false);
  });
});
