import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_PARTNER_LOGO_BYTES, PARTNER_LOGO_SIZES, partnerLogoProblems } from './partner-profile';

const { horizontal, square } = PARTNER_LOGO_SIZES;
const NS = 'xmlns="http://www.w3.org/2000/svg"';

const svg = (attributes: string, body = '<rect width="10" height="10"/>') => `<svg ${NS} ${attributes}>${body}</svg>`;

describe('partner logo sizes', () => {
  it('are 130x48 for the horizontal logo and 75x75 for the square one', () => {
    expect(horizontal).toEqual({ width: 130, height: 48 });
    expect(square).toEqual({ width: 75, height: 75 });
  });
});

describe('partnerLogoProblems: accepted logos', () => {
  it.each([
    ['unitless width and height', svg('width="130" height="48"'), horizontal],
    ['px width and height', svg('width="130px" height=\'48px\''), horizontal],
    ['decimal width and height', svg('width="130.0" height=" 48 "'), horizontal],
    ['a viewBox only', svg('viewBox="0 0 130 48"'), horizontal],
    ['a viewBox with commas and an offset', svg('viewBox="-5,10, 75,75"'), square],
    ['width and height that differ from the viewBox', svg('width="75" height="75" viewBox="0 0 300 300"'), square],
    ['width with the height taken from the viewBox', svg('width="75" viewBox="0 0 150 75"'), square],
    ['a self-closing root', `<svg ${NS} width="75" height="75"/>`, square],
  ])('accepts %s', (_case, logo, expected) => {
    expect(partnerLogoProblems(logo, expected)).toEqual([]);
  });

  it('accepts a prolog of BOM, XML declaration, comments, doctype and whitespace, and trailing comments', () => {
    const logo = [
      '\uFEFF<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
      '<!-- Generator: Adobe Illustrator 27.0 -->',
      '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">',
      `  <svg version="1.1" ${NS} xmlns:xlink="http://www.w3.org/1999/xlink" x="0px" y="0px"`,
      '     width="130px" height="48px" viewBox="0 0 130 48" xml:space="preserve">',
      '<g id="icon-only"><path d="M0 0h130v48H0z" fill="#E30613"/><text>Donations &#169; 2024</text></g>',
      '</svg>',
      '<!-- end -->',
      '',
    ].join('\n');
    expect(partnerLogoProblems(logo, horizontal)).toEqual([]);
  });

  it('accepts a logo of exactly 100 KiB', () => {
    const head = svg('width="75" height="75"', '<!--');
    const logo = `${head.slice(0, -6)}${'x'.repeat(MAX_PARTNER_LOGO_BYTES - head.length - 3)}--></svg>`;
    expect(Buffer.byteLength(logo)).toBe(MAX_PARTNER_LOGO_BYTES);
    expect(partnerLogoProblems(logo, square)).toEqual([]);
  });
});

describe('partnerLogoProblems: refused logos', () => {
  it.each([
    [
      'a size that is not the expected one',
      svg('width="120" height="48"'),
      horizontal,
      'must be 130x48 pixels, not 120x48',
    ],
    ['a square logo where a horizontal one is expected', svg('width="75" height="75"'), horizontal, 'not 75x75'],
    ['a viewBox of another size', svg('viewBox="0 0 260 96"'), horizontal, 'not 260x96'],
    ['no size at all', svg(''), square, 'with width and height or a viewBox'],
    ['a width in millimetres', svg('width="75mm" height="75"'), square, 'width of the logo must be a number of pixels'],
    ['a percentage height', svg('width="75" height="100%"'), square, 'height of the logo must be a number of pixels'],
    ['an invalid viewBox', svg('viewBox="0 0 75"'), square, 'viewBox "0 0 75" of the logo is not valid'],
    ['a viewBox of zero size', svg('viewBox="0 0 0 0"'), square, 'is not valid'],
    ['a missing SVG namespace', '<svg width="75" height="75"></svg>', square, 'must declare xmlns'],
    ['a wrong SVG namespace', '<svg xmlns="http://www.w3.org/1999/xhtml" width="75" height="75"/>', square, 'xmlns'],
    ['an unclosed root element', `<svg ${NS} width="75" height="75"><rect/>`, square, 'must end with </svg>'],
    ['an unclosed start tag', `<svg ${NS} width="75" height="75"`, square, 'start tag of the logo is not closed'],
    ['an HTML document', '<!DOCTYPE html><html><body><svg/></body></html>', square, 'root element is <svg>'],
    ['a PNG', '\u0089PNG\r\n\u001a\n\u0000\u0000\u0000\rIHDR', square, 'root element is <svg>'],
    ['an upper-case root element', `<SVG ${NS} width="75" height="75"/>`, square, 'root element is <svg>'],
    ['another element named like svg', `<svgx ${NS} width="75" height="75"/>`, square, 'root element is <svg>'],
    ['text before the root element', `logo: <svg ${NS} width="75" height="75"/>`, square, 'root element is <svg>'],
    ['an unterminated comment', '<!-- <svg/>', square, 'root element is <svg>'],
    ['a stylesheet instruction', `<?xml-stylesheet href="a.css"?><svg ${NS} width="75" height="75"/>`, square, 'root'],
    ['an empty text', '', square, 'root element is <svg>'],
  ])('refuses %s', (_case, logo, expected, problem) => {
    const problems = partnerLogoProblems(logo, expected);
    expect(problems.join(' ')).toContain(problem);
  });

  it('refuses a logo over 100 KiB, counting UTF-8 bytes', () => {
    const logo = svg('width="75" height="75"', `<!--${'é'.repeat(MAX_PARTNER_LOGO_BYTES / 2)}-->`);
    expect(logo.length).toBeLessThan(MAX_PARTNER_LOGO_BYTES);
    expect(partnerLogoProblems(logo, square)).toEqual(['The logo must be at most 100 KiB.']);
  });

  it.each([
    ['a script element', '<script>alert(1)</script>', 'scripts'],
    ['a script element in capitals', '<SCRIPT type="text/javascript">alert(1)</SCRIPT>', 'scripts'],
    ['a namespaced script element', '<svg:script>alert(1)</svg:script>', 'scripts'],
    ['a script with a space after <', '< script>alert(1)</script>', 'scripts'],
    ['an onload attribute', '<rect onload="alert(1)"/>', 'event handler'],
    ['an ONCLICK attribute', "<rect ONCLICK = 'alert(1)'/>", 'event handler'],
    ['a handler after a slash', '<rect/onmouseover="alert(1)"/>', 'event handler'],
    ['a handler after a quoted value', '<rect x="0"onfocus="alert(1)"/>', 'event handler'],
    ['a javascript: link', '<a href="javascript:alert(1)"><rect/></a>', 'javascript:'],
    ['a JavaScript: link in mixed case', '<a xlink:href="JaVaScRiPt:alert(1)"/>', 'javascript:'],
    ['a javascript: link split by whitespace', '<a href="java\tscript:alert(1)"/>', 'javascript:'],
    ['a javascript: link with character references', '<a href="java&#x73;cript&#58;alert(1)"/>', 'javascript:'],
    ['a javascript: link with a named colon', '<a href="javascript&colon;alert(1)"/>', 'javascript:'],
    ['a handler name written with a character reference', '<rect &#111;nload="alert(1)"/>', 'event handler'],
  ])('refuses %s', (_case, body, problem) => {
    const problems = partnerLogoProblems(svg('width="75" height="75"', body), square);
    expect(problems.join(' ')).toContain(problem);
  });

  it('refuses active content on the root element itself', () => {
    expect(partnerLogoProblems(`<svg ${NS} width="75" height="75" onload="alert(1)"/>`, square)).toEqual([
      'The logo must not contain event handler attributes such as onload.',
    ]);
  });

  it('refuses entity declarations', () => {
    const logo = `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaa">]>${svg('width="75" height="75"', '&a;')}`;
    expect(partnerLogoProblems(logo, square)).toContain('The logo must not declare XML entities.');
  });

  it('reports every problem at once', () => {
    const problems = partnerLogoProblems('<svg width="10" height="10"><script>x</script></svg>', square);
    expect(problems).toEqual([
      'The logo must not contain scripts.',
      'The <svg> element of the logo must declare xmlns="http://www.w3.org/2000/svg".',
      'The logo must be 75x75 pixels, not 10x10.',
    ]);
  });

  it('does not mistake words that contain "on" for event handlers', () => {
    const body = '<g id="icon" class="button"><text font-family="Montserrat">Donation online</text></g>';
    expect(partnerLogoProblems(svg('width="75" height="75"', body), square)).toEqual([]);
  });
});

describe('partnerLogoProblems on garbage', () => {
  it('never throws and always answers with a list of messages', () => {
    const pieces = fc.constantFrom(
      '<svg',
      ' ',
      '"',
      "'",
      '=',
      '>',
      '/>',
      '</svg>',
      '<!--',
      '-->',
      '<?xml ',
      '?>',
      'width',
      '&#x',
      ';',
      'viewBox',
    );
    const garbage = fc.oneof(
      fc.string(),
      fc.array(fc.oneof(pieces, fc.string({ maxLength: 3 }))).map((p) => p.join('')),
    );
    fc.assert(
      fc.property(garbage, (text) => {
        const problems = partnerLogoProblems(text, square);
        expect(Array.isArray(problems)).toBe(true);
        for (const problem of problems) expect(problem).toMatch(/^The .+\.$/);
      }),
    );
  });

  it('answers quickly for pathological input of the largest size', () => {
    const started = performance.now();
    for (const filler of ['a', ' ', '1', 'on', '<', '&#1', '"', "'", '<!--']) {
      const text = `<svg ${NS} ${filler.repeat((MAX_PARTNER_LOGO_BYTES - 60) / filler.length)}`;
      partnerLogoProblems(text, square);
      partnerLogoProblems(`${text}>`, square);
      partnerLogoProblems(`<svg ${NS} width="${'1'.repeat(MAX_PARTNER_LOGO_BYTES - 60)}x"/>`, square);
    }
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses values that are not text', () => {
    expect(partnerLogoProblems(undefined as unknown as string, square)).toEqual([
      'The logo must be an SVG document given as text.',
    ]);
  });
});
