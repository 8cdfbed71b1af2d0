import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRedirectParam, MAX_REDIRECT_URL_LENGTH, redirectTarget, validateRedirect } from './redirect';

const standard = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const urlSafe = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

const APEX = 'https://partner.org';
const WWW = 'https://www.partner.org/';
const SUB = 'https://crm.partner.example/app';

describe('rule 3: decoding the redirect_url parameter', () => {
  // '>>>' and '???' encode to 'Pj4+' and 'Pz8/', so both alphabets really differ below.
  const target = 'https://partner.org/done?a=>>>&b=???&name=Zürich';

  it('decodes standard base64 with and without padding', () => {
    const encoded = standard(`${target}x`);
    expect(encoded).toMatch(/[+/].*=$/);
    expect(decodeRedirectParam(encoded)).toBe(`${target}x`);
    expect(decodeRedirectParam(encoded.replace(/=+$/, ''))).toBe(`${target}x`);
  });

  it('decodes URL-safe base64 with and without padding', () => {
    const encoded = urlSafe(`${target}x`);
    expect(encoded).toMatch(/[-_]/);
    expect(decodeRedirectParam(encoded)).toBe(`${target}x`);
    const padded = encoded.padEnd(Math.ceil(encoded.length / 4) * 4, '=');
    expect(padded).not.toBe(encoded);
    expect(decodeRedirectParam(padded)).toBe(`${target}x`);
  });

  it('reads spaces as plus signs, as form decoding of a query string turns + into a space', () => {
    expect(decodeRedirectParam(standard(target).replaceAll('+', ' '))).toBe(target);
  });

  it.each([
    ['nothing', undefined],
    ['an empty string', ''],
    ['characters outside base64', 'aHR0cHM6Ly9wYXJ0bmVyLm9yZw!!'],
    ['a line break', 'aHR0cHM6Ly9w\nYXJ0bmVyLm9yZw'],
    ['a length no base64 text has', 'aHR0c'],
    ['padding that does not fit the length', 'QQ='],
    ['too much padding', 'QUJD=='],
    ['padding in the middle', 'QQ==QUJD'],
    ['stray bits in the last character', 'QR=='],
    ['both alphabets mixed', 'Pj4+Pz8_'],
    ['bytes that are not UTF-8', '//4='],
    ['only padding', '===='],
    ['an overlong parameter', 'A'.repeat(MAX_REDIRECT_URL_LENGTH * 2)],
  ])('gives nothing for %s', (_case, param) => {
    expect(decodeRedirectParam(param)).toBeUndefined();
  });
});

describe('rules 4 and 5: validating the target', () => {
  it.each([
    [APEX, 'https://partner.org', 'https://partner.org/'],
    [APEX, 'https://partner.org/done?x=1&y=%20#top', 'https://partner.org/done?x=1&y=%20#top'],
    [APEX, 'https://PARTNER.Org/Path', 'https://partner.org/Path'],
    [APEX, 'HTTPS://partner.org/a', 'https://partner.org/a'],
    [APEX, 'https://partner.org:443/a', 'https://partner.org/a'],
    [APEX, 'https://partner.org/@evil.com', 'https://partner.org/@evil.com'],
    [APEX, 'https://partner.org/?next=https://evil.com', 'https://partner.org/?next=https://evil.com'],
    [`${APEX}:443/`, 'https://partner.org/a', 'https://partner.org/a'],
    [WWW, 'https://www.partner.org/welcome', 'https://www.partner.org/welcome'],
    [SUB, 'https://crm.partner.example/other?tab=2', 'https://crm.partner.example/other?tab=2'],
    ['https://partner.org:8443/', 'https://partner.org:8443/x', 'https://partner.org:8443/x'],
    ['https://pärtner.ch', 'https://xn--prtner-bua.ch/x', 'https://xn--prtner-bua.ch/x'],
    ['https://pärtner.ch', 'https://PÄRTNER.ch/x', 'https://xn--prtner-bua.ch/x'],
    ['https://partner.org', 'https://ｐａｒｔｎｅｒ.org/x', 'https://partner.org/x'],
    ['https://[::1]/', 'https://[0:0::1]/x', 'https://[::1]/x'],
  ])('with base %s accepts %s as %s', (base, target, expected) => {
    expect(validateRedirect(target, base)).toEqual({ ok: true, url: expected });
  });

  it.each([
    // Rule 4: https only, written out.
    [APEX, 'http://partner.org/', 'https://'],
    [APEX, 'javascript:alert(1)//https://partner.org', 'https://'],
    [APEX, 'data:text/html,<script>alert(1)</script>', 'https://'],
    [APEX, 'ftp://partner.org/', 'https://'],
    [APEX, '//partner.org/x', 'https://'],
    [APEX, 'https:partner.org', 'https://'],
    [APEX, 'https:/partner.org', 'https://'],
    [APEX, '/relative/path', 'https://'],
    [APEX, 'https:/\\evil.com', 'backslash'],
    [APEX, 'https:\\\\evil.com', 'backslash'],
    [APEX, 'https://partner.org\\@evil.com', 'backslash'],
    [APEX, ' https://partner.org/', 'whitespace'],
    [APEX, 'https://partner.org /', 'whitespace'],
    [APEX, 'https://part\tner.org/', 'whitespace'],
    [APEX, 'https://partner.org\n.evil.com/', 'whitespace'],
    [APEX, 'https://partner.org\u0000.evil.com/', 'control'],
    // Userinfo.
    [APEX, 'https://partner.org@evil.com/', 'user name'],
    [APEX, 'https://evil.com@partner.org/', 'user name'],
    [APEX, 'https://user:pass@partner.org/', 'user name'],
    [APEX, 'https://@partner.org/', 'user name'],
    // Encoded, look-alike and unparsable hosts.
    [APEX, 'https://%65vil.com/', 'percent'],
    [APEX, 'https://partner%2Eorg/', 'percent'],
    [APEX, 'https://pаrtner.org/', 'host partner.org'],
    [APEX, 'https://xn--prtner-bua.org/', 'host partner.org'],
    [APEX, 'https://part ner.org/', 'whitespace'],
    [APEX, 'https://[partner.org]/', 'not a valid URL'],
    // Rule 5 on an apex base: exactly the apex.
    [APEX, 'https://www.partner.org/', 'the host of the base URL'],
    [APEX, 'https://evil-partner.org/', 'the host of the base URL'],
    [APEX, 'https://partner.org.evil.com/', 'the host of the base URL'],
    [APEX, 'https://partner.org./', 'the host of the base URL'],
    [APEX, 'https://PARTNER.org./', 'the host of the base URL'],
    [APEX, 'https://evil.com/?partner.org', 'the host of the base URL'],
    [APEX, 'https://evil.com#partner.org', 'the host of the base URL'],
    [APEX, 'https://partner.org:8443/', 'port'],
    // Rule 5 on a www base: exactly that www host.
    [WWW, 'https://partner.org/', 'begins with www'],
    [WWW, 'https://shop.partner.org/', 'begins with www'],
    [WWW, 'https://www.www.partner.org/', 'begins with www'],
    [WWW, 'https://www.partner.org.evil.com/', 'begins with www'],
    [WWW, 'https://www2.partner.org/', 'begins with www'],
    // Rule 5 on a subdomain base: exactly that subdomain.
    [SUB, 'https://partner.example/', 'same subdomain'],
    [SUB, 'https://www.partner.example/', 'same subdomain'],
    [SUB, 'https://other.partner.example/', 'same subdomain'],
    [SUB, 'https://a.crm.partner.example/', 'same subdomain'],
    [SUB, 'https://crm.partner.example.evil.com/', 'same subdomain'],
    // A base URL with a port needs that port.
    ['https://partner.org:8443', 'https://partner.org/x', 'port'],
    // Without a valid base URL nothing is accepted.
    ['not a url', 'https://partner.org/', 'base URL'],
    ['javascript:alert(1)', 'https://partner.org/', 'base URL'],
  ])('with base %s refuses %j (%s)', (base, target, reason) => {
    const result = validateRedirect(target, base);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.reason).toContain(reason);
  });

  it('refuses targets longer than the limit', () => {
    const long = `https://partner.org/${'a'.repeat(MAX_REDIRECT_URL_LENGTH)}`;
    expect(validateRedirect(long, APEX)).toMatchObject({ ok: false });
  });
});

describe('rule 6: the redirect target with fallback to the base URL', () => {
  it('sends the user to the validated decoded URL', () => {
    expect(redirectTarget(urlSafe('https://partner.org/thanks?id=42'), APEX)).toBe('https://partner.org/thanks?id=42');
  });

  it.each([
    ['no parameter', undefined],
    ['an undecodable parameter', '%%%'],
    ['a target on another host', standard('https://evil.com/')],
    ['a plain http target', standard('http://partner.org/')],
    ['a javascript target', standard('javascript:alert(document.domain)')],
  ])('falls back to the registered base URL for %s', (_case, param) => {
    expect(redirectTarget(param, WWW)).toBe(WWW);
  });
});

describe('redirect properties', () => {
  const base = new URL('https://partner.org/start');
  const encodings = fc.constantFrom(standard, urlSafe, (t: string) => standard(t).replace(/=+$/, ''));
  const safeText = fc.stringMatching(/^[A-Za-z0-9._~-]{0,12}$/);
  // Dot segments (`.`, `..`) are resolved by every URL parser, so a generated path has none.
  const segment = safeText.filter((s) => s !== '.' && s !== '..');
  const path = fc.array(segment, { maxLength: 4 }).map((segments) => `/${segments.join('/')}`);
  const query = fc.option(
    fc
      .array(fc.tuple(safeText, safeText), { minLength: 1, maxLength: 3 })
      .map((pairs) => `?${pairs.map((p) => p.join('=')).join('&')}`),
    { nil: '' },
  );
  const fragment = fc.option(
    safeText.map((f) => `#${f}`),
    { nil: '' },
  );
  const otherHost = fc
    .oneof(
      fc.domain(),
      fc.domain().map((d) => `${d}.partner.org`),
      fc.domain().map((d) => `partner.org.${d}`),
      fc.domain().map((d) => `${d.split('.')[0]}partner.org`),
      fc.constantFrom('www.partner.org', 'partner.org.', 'partner.org:444', 'partner.org:80', 'evil.com'),
    )
    .filter((host) => host !== base.host);

  it('always falls back to the base URL for a target on another host', () => {
    fc.assert(
      fc.property(otherHost, path, query, fragment, encodings, (host, p, q, f, encode) => {
        expect(redirectTarget(encode(`https://${host}${p}${q}${f}`), base.href)).toBe(base.href);
      }),
    );
  });

  it('returns exactly the decoded target for any path, query and fragment on the base host', () => {
    fc.assert(
      fc.property(path, query, fragment, encodings, (p, q, f, encode) => {
        const target = `https://partner.org${p}${q}${f}`;
        expect(redirectTarget(encode(target), base.href)).toBe(target);
      }),
    );
  });

  it('never leads anywhere but the base URL or an https URL on the base host, whatever the input', () => {
    const tricky = fc.constantFrom(
      '@',
      '\\',
      '/',
      '.',
      ':',
      '%2e',
      '%40',
      '#',
      '?',
      ' ',
      '\t',
      'ｏ',
      '。',
      'www.',
      'evil.com',
    );
    const mangled = fc
      .array(fc.oneof(tricky, fc.string({ maxLength: 4 })), { maxLength: 6 })
      .chain((parts) =>
        fc.constantFrom(
          `https://partner.org${parts.join('')}`,
          `https://${parts.join('')}partner.org/`,
          `https:${parts.join('')}`,
          parts.join(''),
        ),
      );
    fc.assert(
      fc.property(mangled, encodings, (target, encode) => {
        const result = redirectTarget(encode(target), base.href);
        if (result === base.href) return;
        const url = new URL(result);
        expect([url.protocol, url.host, url.username, url.password]).toEqual(['https:', 'partner.org', '', '']);
        expect(result).toBe(url.href);
      }),
    );
  });
});
