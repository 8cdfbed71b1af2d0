import { describe, expect, it } from 'vitest';
import { hashSecret, verifySecret } from './secret-hash';

describe('secret hashes', () => {
  it('verify the right secret only, and salt every hash', async () => {
    const first = await hashSecret('correct horse battery staple');
    const second = await hashSecret('correct horse battery staple');
    expect(first).not.toBe(second);
    expect(first).not.toContain('correct horse');
    expect(await verifySecret('correct horse battery staple', first)).toBe(true);
    expect(await verifySecret('correct horse battery staple', second)).toBe(true);
    expect(await verifySecret('correct horse battery stapler', first)).toBe(false);
    expect(await verifySecret('', first)).toBe(false);
  });

  it('never match a malformed stored hash', async () => {
    for (const stored of ['', 'plain', 'scrypt$1$2$3', 'bcrypt$x$y$z$a$b', 'scrypt$16384$8$1$c2FsdA$aGFzaA']) {
      expect(await verifySecret('x', stored)).toBe(false);
    }
  });
});
