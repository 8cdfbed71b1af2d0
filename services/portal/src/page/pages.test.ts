import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkMailPage, continuePage, homePage, loginPage, type PageContext, problemPage } from './pages';

const HOSTILE = `"><script>alert('x')</script><img src=x onerror=alert(1)>`;

const ctx: PageContext = {
  locale: 'en',
  brand: { name: HOSTILE, color: '#1f5fa8' },
  selfPath: `/portal?token=${encodeURIComponent(HOSTILE)}`,
  csrfToken: 'c'.repeat(43),
  returnUrl: 'javascript:alert(1)',
};

const pages = [
  continuePage(ctx, { token: HOSTILE, csrf: HOSTILE }),
  loginPage(ctx, { organisationUuid: HOSTILE, email: HOSTILE, error: HOSTILE }),
  checkMailPage(ctx, HOSTILE),
  problemPage(ctx, 'expired', { organisationUuid: HOSTILE }),
  problemPage(ctx, 'csrf', { retryPath: '/portal?token=x' }),
  homePage(ctx, { name: HOSTILE }),
];

describe('the portal pages', () => {
  it('escape every value they show: no markup gets in from a brand, a form or a token', () => {
    for (const page of pages) {
      expect(page.html).not.toContain('<script');
      expect(page.html).not.toContain('<img');
      expect(page.html).not.toContain('javascript:');
      expect(page.html).toContain('&lt;script&gt;');
    }
  });

  it('let exactly their own style apply: the policy names its hash, and nothing inline else', () => {
    for (const page of pages) {
      const style = /<style>([\s\S]*?)<\/style>/.exec(page.html)?.[1] ?? '';
      const hash = createHash('sha256').update(style, 'utf8').digest('base64');
      expect(page.contentSecurityPolicy).toContain(`style-src 'sha256-${hash}'`);
      expect(page.contentSecurityPolicy).toContain("frame-ancestors 'none'");
      expect(page.contentSecurityPolicy).toContain("form-action 'self'");
      // No tag carries a style or an event handler attribute (attribute values, escaped, left out).
      const tags = page.html.replace(/"[^"]*"/g, '""');
      expect(tags).not.toMatch(/<[a-z][^>]*\sstyle=/i);
      expect(tags).not.toMatch(/<[a-z][^>]*\son[a-z]+=/i);
    }
  });

  it('label the e-mail field, tie its hint and error to it, and mark it invalid', () => {
    const { html } = loginPage(ctx, { organisationUuid: 'o', email: 'x', error: 'Enter an e-mail address' });
    expect(html).toContain('<label for="email">E-mail address</label>');
    expect(html).toContain('aria-describedby="email-hint email-error"');
    expect(html).toContain('aria-invalid="true"');
    expect(html).toContain('<title>Error: Get a link by e-mail');
  });

  it('carry the session’s CSRF token in a meta tag, and only where a session exists', () => {
    expect(homePage(ctx, {}).html).toContain(`<meta name="csrf-token" content="${'c'.repeat(43)}">`);
    const { csrfToken: _none, ...anonymous } = ctx;
    expect(loginPage(anonymous, { organisationUuid: 'o' }).html).not.toContain('csrf-token');
  });
});
