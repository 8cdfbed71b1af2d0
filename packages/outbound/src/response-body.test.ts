import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { completeUtf8Length, ResponseBody } from './response-body';

describe('completeUtf8Length', () => {
  it.each<readonly [string, number[], number]>([
    ['empty', [], 0],
    ['ASCII', [0x61, 0x62], 2],
    ['whole 2-byte é', [0x61, 0xc3, 0xa9], 3],
    ['cut 2-byte é', [0x61, 0xc3], 1],
    ['whole 3-byte €', [0xe2, 0x82, 0xac], 3],
    ['cut 3-byte € after 1', [0x61, 0xe2], 1],
    ['cut 3-byte € after 2', [0x61, 0xe2, 0x82], 1],
    ['whole 4-byte 😀', [0xf0, 0x9f, 0x98, 0x80], 4],
    ['cut 4-byte 😀 after 3', [0x61, 0xf0, 0x9f, 0x98], 1],
    ['stray continuation bytes are left to the decoder', [0x80, 0x80, 0x80, 0x80, 0x80], 5],
  ])('%s', (_name, bytes, expected) => {
    expect(completeUtf8Length(Uint8Array.from(bytes))).toBe(expected);
  });

  it('never cuts valid text anywhere but at a character boundary', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '\u0000'), maxLength: 40 }),
        fc.nat(),
        (text, at) => {
          const bytes = Buffer.from(text, 'utf8');
          const cut = bytes.subarray(0, at % (bytes.length + 1));
          const kept = cut.subarray(0, completeUtf8Length(cut)).toString('utf8');
          expect(text.startsWith(kept)).toBe(true);
          expect(cut.length - Buffer.byteLength(kept)).toBeLessThan(4);
        },
      ),
    );
  });
});

describe('ResponseBody', () => {
  it('keeps a body that fits, including one of exactly the limit', () => {
    const body = new ResponseBody(6);
    expect(body.push(Buffer.from('abc'))).toBe(true);
    expect(body.push(Buffer.from('def'))).toBe(true);
    expect(body.text()).toBe('abcdef');
    expect(body.truncated).toBe(false);
  });

  it('stops at the limit without splitting a character', () => {
    const body = new ResponseBody(7);
    expect(body.push(Buffer.from('€€'))).toBe(true);
    expect(body.push(Buffer.from('€'))).toBe(false);
    expect(body.text()).toBe('€€');
    expect(body.truncated).toBe(true);
  });

  it('keeps nothing with a limit of zero', () => {
    const body = new ResponseBody(0);
    expect(body.push(Buffer.from('x'))).toBe(false);
    expect(body.text()).toBe('');
  });
});
