import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attrs, escapeHtml, html, isSafeHtml, raw, safeHref, safePath } from './html';
import { decodeEntities, parseDocument } from './testing-html';

describe('escapeHtml', () => {
  it('escapes & < > " \' and `', () => {
    expect(escapeHtml(`&<>"'\``)).toBe('&amp;&lt;&gt;&quot;&#39;&#96;');
    expect(escapeHtml('a &amp; b')).toBe('a &amp;amp; b');
    expect(escapeHtml('Zürich – “ok”')).toBe('Zürich – “ok”');
  });

  it('round-trips any string through a quoted attribute and element content', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        const doc = html`<p title="${value}">${value}</p>`.value;
        const [p] = parseDocument(doc);
        expect(p?.attrs.get('title')).toBe(value);
        expect(decodeEntities(doc.slice(p?.end ?? 0, -'</p>'.length))).toBe(value);
        expect(doc.match(/</g)).toHaveLength(2);
      }),
    );
  });
});

describe('html', () => {
  it('escapes interpolated values, keeps nested templates and raw markup', () => {
    const name = '<b>"x"</b>';
    const inner = html`<em>${name}</em>`;
    expect(html`<p>${inner} ${raw('<br>')}</p>`.value).toBe('<p><em>&lt;b&gt;&quot;x&quot;&lt;/b&gt;</em> <br></p>');
  });

  it('joins arrays, renders nothing for null, undefined and booleans, numbers as text', () => {
    const items = ['<a>', html`<i>b</i>`, ['c', null]];
    expect(html`<ul>${items}</ul>`.value).toBe('<ul>&lt;a&gt;<i>b</i>c</ul>');
    expect(html`${null}${undefined}${false}${true}${0}${1.5}`.value).toBe('01.5');
  });

  it('does not treat look-alike objects as markup', () => {
    const fake = { value: '<script>', toString: () => '<script>' } as unknown as string;
    expect(html`${fake}`.value).toBe('&lt;script&gt;');
    expect(isSafeHtml(fake)).toBe(false);
    expect(isSafeHtml(raw('x'))).toBe(true);
  });

  it('converts to the markup string', () => {
    expect(String(html`<p>${'&'}</p>`)).toBe('<p>&amp;</p>');
  });
});

describe('attrs', () => {
  it('renders bare, quoted and omitted attributes', () => {
    expect(
      attrs({ required: true, readonly: false, value: '"<x>', maxlength: 2, title: undefined, alt: null }).value,
    ).toBe(' required value="&quot;&lt;x&gt;" maxlength="2"');
  });

  it('refuses event handlers, style and odd attribute names', () => {
    for (const name of ['onclick', 'onerror', 'style', 'x y', '"', 'a=b', 'ONCLICK', '']) {
      expect(() => attrs({ [name]: 'x' }), name).toThrow();
    }
  });
});

describe('safeHref', () => {
  it('accepts absolute http(s) URLs only', () => {
    expect(safeHref('https://partner.example/back?x=1')).toBe('https://partner.example/back?x=1');
    expect(safeHref('http://localhost:3000/')).toBe('http://localhost:3000/');
    for (const bad of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      ' javascript:x',
      'data:text/html,x',
      '/relative',
      'vbscript:x',
      '',
    ]) {
      expect(safeHref(bad), bad).toBeUndefined();
    }
    expect(safeHref(undefined)).toBeUndefined();
  });
});

describe('safePath', () => {
  it('accepts same-origin paths only', () => {
    expect(safePath('/connect?token=a&b=c', '/x')).toBe('/connect?token=a&b=c');
    for (const bad of [
      '//evil.example',
      '/\\evil.example',
      'https://evil.example',
      'connect',
      '/a\nb',
      '/a\tb',
      '/a b',
    ]) {
      expect(safePath(bad, '/fallback'), JSON.stringify(bad)).toBe('/fallback');
    }
    expect(safePath(undefined, '/fallback')).toBe('/fallback');
  });
});
