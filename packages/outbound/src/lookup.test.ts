import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { pinnedLookup } from './lookup';

function ask(all: boolean): Promise<{ address: string | LookupAddress[]; family: number | undefined }> {
  return new Promise((resolve, reject) => {
    pinnedLookup('2606:4700:4700::1111', 6)('anything.example', { all }, (error, address, family) => {
      if (error) reject(error);
      else resolve({ address, family });
    });
  });
}

describe('pinnedLookup', () => {
  it('answers a single-address question with the pinned address, whatever the name', async () => {
    await expect(ask(false)).resolves.toEqual({ address: '2606:4700:4700::1111', family: 6 });
  });

  it('answers the happy-eyeballs (all: true) question with a one-element list', async () => {
    await expect(ask(true)).resolves.toEqual({
      address: [{ address: '2606:4700:4700::1111', family: 6 }],
      family: undefined,
    });
  });

  it('answers asynchronously, like the real resolver', () => {
    let answered = false;
    pinnedLookup('127.0.0.1', 4)('x', {}, () => {
      answered = true;
    });
    expect(answered).toBe(false);
  });
});
