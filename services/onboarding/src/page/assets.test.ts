import { describe, expect, it } from 'vitest';
import {
  ASSET_PATH_PREFIX,
  assetPath,
  CONNECT_CSS,
  CONNECT_JS,
  contentHash,
  findAsset,
  hashedFileName,
} from './assets';

describe('asset names', () => {
  it('carry a 12-character base64url SHA-256 of the content', () => {
    expect(assetPath('connect.css')).toBe(`/connect/assets/connect.${contentHash(CONNECT_CSS)}.css`);
    expect(assetPath('connect.js')).toBe(`/connect/assets/connect.${contentHash(CONNECT_JS)}.js`);
    expect(assetPath('connect.css')).toMatch(/^\/connect\/assets\/connect\.[A-Za-z0-9_-]{12}\.css$/);
    expect(contentHash('abc')).toBe('ungWv48Bz-pB'); // sha256("abc") = ba7816bf…, base64url "ungWv48Bz-pBQUDeXa4iI7…"
  });

  it('change when the content changes', () => {
    expect(contentHash(`${CONNECT_CSS} `)).not.toBe(contentHash(CONNECT_CSS));
    expect(hashedFileName('connect.css', `${CONNECT_CSS}\n`)).not.toBe(assetPath('connect.css').slice(16));
    expect(contentHash(CONNECT_JS)).toBe(contentHash(String(CONNECT_JS)));
  });
});

describe('findAsset', () => {
  it('finds the assets by hashed file name or path, with their content type', () => {
    const css = assetPath('connect.css');
    expect(findAsset(css.slice(ASSET_PATH_PREFIX.length))).toEqual({
      body: CONNECT_CSS,
      contentType: 'text/css; charset=utf-8',
    });
    expect(findAsset(css)?.body).toBe(CONNECT_CSS);
    expect(findAsset(assetPath('connect.js'))).toEqual({
      body: CONNECT_JS,
      contentType: 'text/javascript; charset=utf-8',
    });
  });

  it('returns undefined for anything else', () => {
    const js = assetPath('connect.js').slice(ASSET_PATH_PREFIX.length);
    for (const name of [
      'connect.css',
      'connect.js',
      'connect.AAAAAAAAAAAA.css',
      js.replace('.js', '.css'),
      `../${js}`,
      `${js}?x`,
      '',
      'toString',
      '__proto__',
      'constructor',
    ]) {
      expect(findAsset(name), name).toBeUndefined();
    }
  });
});

/** WCAG 2 relative luminance and contrast ratio. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

describe('style sheet', () => {
  const colour = Object.fromEntries(
    Array.from(CONNECT_CSS.matchAll(/--([\w-]+):\s*(#[0-9a-f]{6});/g), (m) => [m[1], m[2]]),
  );
  const c = (name: string) => {
    expect(colour[name], name).toBeDefined();
    return colour[name] as string;
  };

  it('has text contrast of at least 4.5:1 and UI contrast of at least 3:1', () => {
    for (const [fg, bg] of [
      ['text', 'surface'],
      ['text', 'bg'],
      ['muted', 'surface'],
      ['muted', 'bg'],
      ['primary', 'surface'],
      ['primary', 'bg'],
      ['on-primary', 'primary'],
      ['on-primary', 'primary-hover'],
      ['error', 'surface'],
      ['text', 'note-bg'],
    ]) {
      expect(contrast(c(fg as string), c(bg as string)), `${fg} on ${bg}`).toBeGreaterThanOrEqual(4.5);
    }
    for (const [fg, bg] of [
      ['border', 'surface'],
      ['focus', 'surface'],
      ['focus', 'bg'],
      ['error', 'surface'],
      ['note-border', 'note-bg'],
    ]) {
      expect(contrast(c(fg as string), c(bg as string)), `${fg} on ${bg}`).toBeGreaterThanOrEqual(3);
    }
  });

  it('has visible focus, error styles, a 40rem single column and loads nothing else', () => {
    expect(CONNECT_CSS).toContain(':focus-visible { outline: 3px solid var(--focus)');
    expect(CONNECT_CSS).toContain('[aria-invalid="true"]');
    expect(CONNECT_CSS).toContain('.error-summary');
    expect(CONNECT_CSS).toContain('max-width: 40rem');
    expect(CONNECT_CSS).toContain('prefers-reduced-motion');
    expect(CONNECT_CSS).not.toMatch(/url\(|@import/);
    expect(CONNECT_CSS.split('{').length).toBe(CONNECT_CSS.split('}').length);
  });
});

describe('script', () => {
  it('is valid JavaScript without eval or HTML injection', () => {
    expect(() => new Function(CONNECT_JS)).not.toThrow();
    expect(CONNECT_JS).not.toMatch(/\beval\(|innerHTML|outerHTML|document\.write|new Function/);
  });
});
