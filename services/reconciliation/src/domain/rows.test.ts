import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitAt } from '../testing/chunks';
import { decodeUtf8, InvalidEncodingError, parseDate } from './rows';

async function collect(source: Iterable<Uint8Array | string> | AsyncIterable<Uint8Array | string>): Promise<string> {
  let text = '';
  for await (const chunk of decodeUtf8(source)) text += chunk;
  return text;
}

describe('parseDate', () => {
  it.each([
    ['2025-03-31', {}, '2025-03-31'],
    ['2024-02-29', {}, '2024-02-29'],
    ['0099-01-01', {}, '0099-01-01'],
    ['31.03.2025', { swiss: true }, '2025-03-31'],
    ['29.02.2024', { swiss: true }, '2024-02-29'],
  ])('reads %s', (text, options, date) => expect(parseDate(text, options)).toBe(date));

  it.each([
    ['2025-02-29', {}],
    ['2025-04-31', {}],
    ['2025-13-01', {}],
    ['2025-00-10', {}],
    ['2025-3-31', {}],
    ['20250331', {}],
    ['2025/03/31', {}],
    ['31.03.2025', {}],
    ['31.04.2025', { swiss: true }],
    ['3.3.2025', { swiss: true }],
    ['03/31/2025', { swiss: true }],
    [' 2025-03-31', {}],
    ['', {}],
  ])('refuses %j', (text, options) => expect(parseDate(text, options)).toBeUndefined());
});

describe('decodeUtf8', () => {
  it('joins characters split across chunks, wherever the chunks are cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary' }), fc.array(fc.nat()), async (text, cuts) => {
        const chunks = splitAt(new TextEncoder().encode(text), cuts);
        expect(await collect(chunks)).toBe(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      }),
    );
  });

  it('drops one leading byte order mark, also from strings, and nothing else', async () => {
    expect(await collect([Buffer.from([0xef, 0xbb]), Buffer.from([0xbf, 0x41])])).toBe('A');
    expect(await collect(['\ufeffA\ufeff'])).toBe('A\ufeff');
    expect(await collect(['', '\ufeff\ufeffA'])).toBe('\ufeffA');
  });

  it.each([
    ['Latin-1 ü', [0x47, 0xfc, 0x6e]],
    ['a lone continuation byte', [0x80]],
    ['an overlong encoding', [0xc0, 0xaf]],
    ['a cut-off sequence at the end', [0x41, 0xe2, 0x82]],
    ['UTF-16 with its BOM', [0xff, 0xfe, 0x41, 0x00]],
  ])('refuses %s', async (_, bytes) => {
    await expect(collect([Uint8Array.from(bytes)])).rejects.toBeInstanceOf(InvalidEncodingError);
  });

  it('passes the errors of the source itself through unchanged', async () => {
    const failure = new Error('socket hang up');
    async function* broken() {
      yield Buffer.from('abc');
      throw failure;
    }
    await expect(collect(broken())).rejects.toBe(failure);
  });
});
