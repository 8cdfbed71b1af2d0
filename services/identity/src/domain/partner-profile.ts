/**
 * Checks of the partner registration data: the two logos are SVG documents,
 * horizontal 130x48 and square 75x75. The checks read the text without an XML parser: they look
 * at the prolog, the root start tag and its attributes, and scan the whole text for active content.
 */

export const PARTNER_LOGO_SIZES = {
  horizontal: { width: 130, height: 48 },
  square: { width: 75, height: 75 },
} as const;

/** 100 KiB, counted in UTF-8 bytes. */
export const MAX_PARTNER_LOGO_BYTES = 100 * 1024;

const SVG_NAMESPACE = 'http://www.w3.org/2000/svg';

/** Character references decoded, so that `java&#x73;cript:` and `&#111;nload` are seen for what they are. */
function decodeReferences(text: string): string {
  const fromCode = (code: number) => (code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '');
  return text
    .replace(/&#x([0-9a-f]{1,8});?/gi, (_match, hex: string) => fromCode(Number.parseInt(hex, 16)))
    .replace(/&#(\d{1,10});?/g, (_match, decimal: string) => fromCode(Number(decimal)))
    .replace(
      /&(colon|tab|newline);/gi,
      (_match, name: string) =>
        ({ colon: ':', tab: '\t', newline: '\n' })[name.toLowerCase() as 'colon' | 'tab' | 'newline'],
    );
}

function activeContentProblems(svg: string): string[] {
  const decoded = decodeReferences(svg);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: browsers ignore these inside a scheme name.
  const compact = decoded.replace(/[\u0000-\u0020\u007f]+/g, '');
  const problems: string[] = [];
  if (/<\s*([\w.-]+:)?script\b/i.test(decoded)) problems.push('The logo must not contain scripts.');
  if (/(?:^|[\s"'/:])on[a-z][\w-]*\s*=/i.test(decoded)) {
    problems.push('The logo must not contain event handler attributes such as onload.');
  }
  if (/javascript:/i.test(compact)) problems.push('The logo must not contain javascript: URLs.');
  if (/<!ENTITY/i.test(decoded)) problems.push('The logo must not declare XML entities.');
  return problems;
}

/** Index of the root element after the BOM, whitespace, an XML declaration, comments and a doctype. */
function rootStart(svg: string): number | undefined {
  let at = svg.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (at < svg.length && /\s/.test(svg.charAt(at))) at += 1;
    const skipTo = (terminator: string) => {
      const end = svg.indexOf(terminator, at);
      return end < 0 ? undefined : end + terminator.length;
    };
    let next: number | undefined;
    if (svg.startsWith('<?xml', at) && /[\s?]/.test(svg.charAt(at + 5))) next = skipTo('?>');
    else if (svg.startsWith('<!--', at)) next = skipTo('-->');
    else if (svg.startsWith('<!DOCTYPE', at)) next = skipTo('>');
    else return at;
    if (next === undefined) return undefined;
    at = next;
  }
}

/** The text between `<svg` and the `>` that closes the start tag, quotes respected. */
function startTag(svg: string, from: number): string | undefined {
  let quote: string | undefined;
  for (let i = from; i < svg.length; i += 1) {
    const c = svg.charAt(i);
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return svg.slice(from, i);
    else if (c === '<') return undefined;
  }
  return undefined;
}

/** The attributes of a start tag, read left to right in linear time (first occurrence wins). */
function attributes(tag: string): Map<string, string> {
  const found = new Map<string, string>();
  const name = /[^\s=/>"']+/y;
  const equals = /\s*=\s*/y;
  const value = /"([^"]*)"|'([^']*)'/y;
  let at = 0;
  while (at < tag.length) {
    name.lastIndex = at;
    const attribute = name.exec(tag);
    if (!attribute) {
      at += 1;
      continue;
    }
    at = name.lastIndex;
    equals.lastIndex = at;
    if (!equals.test(tag)) continue;
    value.lastIndex = equals.lastIndex;
    const quoted = value.exec(tag);
    if (!quoted) continue;
    at = value.lastIndex;
    if (!found.has(attribute[0])) found.set(attribute[0], quoted[1] ?? quoted[2] ?? '');
  }
  return found;
}

/** Ends with `</svg>`, after trailing whitespace and comments. */
function closesRoot(svg: string): boolean {
  let rest = svg.trimEnd();
  while (rest.endsWith('-->')) {
    const open = rest.lastIndexOf('<!--');
    if (open < 0) return false;
    rest = rest.slice(0, open).trimEnd();
  }
  return /<\/svg\s*>$/.test(rest);
}

/** A number as SVG writes it; unambiguous, so that no input makes the regular expressions backtrack. */
const NUMBER = String.raw`[+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?`;

function pixels(value: string): number | undefined {
  if (value.length > 40) return undefined;
  const match = new RegExp(`^\\s*(${NUMBER})\\s*(?:px)?\\s*$`, 'i').exec(value);
  return match ? Number(match[1]) : undefined;
}

function viewBoxSize(value: string): { width: number; height: number } | undefined {
  if (value.length > 200) return undefined;
  const parts = value.trim().split(/[\s,]+/);
  if (parts.length !== 4 || !parts.every((part) => new RegExp(`^-?${NUMBER}$`, 'i').test(part))) return undefined;
  const [, , width, height] = parts.map(Number);
  return width !== undefined && height !== undefined && width > 0 && height > 0 ? { width, height } : undefined;
}

const same = (a: number, b: number) => Math.abs(a - b) < 1e-6;
const quoted = (value: string) => JSON.stringify(value.length > 20 ? `${value.slice(0, 20)}…` : value);

function sizeProblems(attrs: Map<string, string>, expected: { width: number; height: number }): string[] {
  const problems: string[] = [];
  const viewBoxText = attrs.get('viewBox');
  const viewBox = viewBoxText === undefined ? undefined : viewBoxSize(viewBoxText);
  if (viewBoxText !== undefined && !viewBox)
    problems.push(`The viewBox ${quoted(viewBoxText)} of the logo is not valid.`);
  const size: Record<'width' | 'height', number | undefined> = { width: undefined, height: undefined };
  for (const dimension of ['width', 'height'] as const) {
    const text = attrs.get(dimension);
    if (text === undefined) {
      size[dimension] = viewBox?.[dimension];
      continue;
    }
    size[dimension] = pixels(text);
    if (size[dimension] === undefined) {
      problems.push(`The ${dimension} of the logo must be a number of pixels, not ${quoted(text)}.`);
    }
  }
  if (problems.length > 0) return problems;
  if (size.width === undefined || size.height === undefined) {
    return [`The logo must give its size (${expected.width}x${expected.height}) with width and height or a viewBox.`];
  }
  if (!same(size.width, expected.width) || !same(size.height, expected.height)) {
    return [`The logo must be ${expected.width}x${expected.height} pixels, not ${size.width}x${size.height}.`];
  }
  return [];
}

/**
 * What is wrong with a partner logo; empty when it is acceptable. The logo must be an SVG
 * document (root element `<svg>` in the SVG namespace, closed at the end) of at most 100 KiB,
 * whose width and height attributes (unitless or px) or, where they are missing, whose viewBox
 * give the expected size, and that has no scripts, event handler attributes, `javascript:` URLs
 * or entity declarations. Never throws.
 */
export function partnerLogoProblems(svg: string, expected: { width: number; height: number }): string[] {
  if (typeof svg !== 'string') return ['The logo must be an SVG document given as text.'];
  if (Buffer.byteLength(svg, 'utf8') > MAX_PARTNER_LOGO_BYTES) return ['The logo must be at most 100 KiB.'];
  const problems = activeContentProblems(svg);
  const root = rootStart(svg);
  if (root === undefined || !/^<svg[\s/>]/.test(svg.slice(root, root + 5))) {
    return [...problems, 'The logo must be an SVG document whose root element is <svg>.'];
  }
  const tag = startTag(svg, root + 4);
  if (tag === undefined) return [...problems, 'The <svg> start tag of the logo is not closed.'];
  const attrs = attributes(tag);
  if (attrs.get('xmlns') !== SVG_NAMESPACE) {
    problems.push(`The <svg> element of the logo must declare xmlns="${SVG_NAMESPACE}".`);
  }
  if (!tag.trimEnd().endsWith('/') && !closesRoot(svg)) problems.push('The logo must end with </svg>.');
  return [...problems, ...sizeProblems(attrs, expected)];
}
