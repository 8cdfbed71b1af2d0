import { describe, expect, it } from 'vitest';
import { pagePolicy } from './page-headers';
import { toLambdaResult } from './responses';

describe('the security headers of an HTML answer', () => {
  it('are set on a page without any, and never on JSON', () => {
    const page = toLambdaResult({ status: 200, html: '<p>hi</p>' });
    expect(page.headers).toMatchObject({
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    expect(String(page.headers?.['content-security-policy'])).toContain("frame-ancestors 'none'");
    expect(toLambdaResult({ status: 200, body: { a: 1 } }).headers?.['x-frame-options']).toBeUndefined();
  });

  it("keep a page's own policy and make its frame-ancestors 'none', whatever the page said", () => {
    const own = "default-src 'none'; script-src 'self'; frame-ancestors https://evil.example";
    const page = toLambdaResult({
      status: 200,
      html: '<p>hi</p>',
      headers: { 'Content-Security-Policy': own, 'X-Frame-Options': 'SAMEORIGIN', 'cache-control': 'no-store' },
    });
    expect(page.headers?.['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; frame-ancestors 'none'",
    );
    expect(page.headers?.['x-frame-options']).toBe('DENY');
    expect(page.headers?.['X-Frame-Options']).toBeUndefined();
    expect(page.headers?.['cache-control']).toBe('no-store');
    expect(pagePolicy("img-src 'self'")).toBe("img-src 'self'; frame-ancestors 'none'");
  });
});
