/**
 * Test support: a strict reader for the markup these templates produce (every attribute value
 * double-quoted, text escaped). Anything else — a stray `<`, an unknown entity, an unquoted
 * attribute — makes `parseDocument` throw, which is how the tests prove values cannot break out.
 */

export interface Element {
  tag: string;
  attrs: Map<string, string>;
  /** Offset of the `<` of the start tag and just after its `>`. */
  start: number;
  end: number;
}

const ENTITIES: Readonly<Record<string, string>> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
  '&#96;': '`',
};

export function decodeEntities(text: string): string {
  return text.replace(/&[^;\s]*;?/g, (entity) => {
    const decoded = ENTITIES[entity];
    if (decoded === undefined) throw new Error(`Unexpected entity or bare ampersand: ${entity}`);
    return decoded;
  });
}

const START_TAG = /<([a-z][a-z0-9-]*)((?:\s+[a-z][a-z0-9-]*(?:="[^"'<>`]*")?)*)\s*>/y;
const END_TAG = /<\/([a-z][a-z0-9-]*)>/y;
const ATTRIBUTE = /\s+([a-z][a-z0-9-]*)(?:="([^"]*)")?/g;

export function parseDocument(doc: string): Element[] {
  const elements: Element[] = [];
  let index = doc.indexOf('<');
  while (index !== -1) {
    if (doc.startsWith('<!doctype html>', index)) {
      index = doc.indexOf('<', index + 1);
      continue;
    }
    END_TAG.lastIndex = index;
    const end = END_TAG.exec(doc);
    if (end) {
      index = doc.indexOf('<', END_TAG.lastIndex);
      continue;
    }
    START_TAG.lastIndex = index;
    const start = START_TAG.exec(doc);
    if (!start) throw new Error(`Malformed markup at ${index}: ${doc.slice(index, index + 80)}`);
    const attrs = new Map<string, string>();
    for (const match of (start[2] ?? '').matchAll(ATTRIBUTE)) {
      const name = match[1] ?? '';
      if (attrs.has(name)) throw new Error(`Duplicate attribute ${name} at ${index}`);
      attrs.set(name, decodeEntities(match[2] ?? ''));
    }
    elements.push({ tag: start[1] ?? '', attrs, start: index, end: START_TAG.lastIndex });
    index = doc.indexOf('<', START_TAG.lastIndex);
  }
  // Text between tags: only the known entities, and no stray `>`.
  const text = doc.replace(/<[^>]*>/g, '');
  if (text.includes('>')) throw new Error('Stray > in text');
  decodeEntities(text);
  return elements;
}

/** The decoded text inside an element (tags removed), up to its first closing tag of the same name. */
export function textOf(doc: string, element: Element): string {
  const close = doc.indexOf(`</${element.tag}>`, element.end);
  if (close === -1) throw new Error(`No </${element.tag}> after ${element.start}`);
  return decodeEntities(doc.slice(element.end, close).replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
}

/** The markup inside an element, up to its first closing tag of the same name. */
export function innerOf(doc: string, element: Element): string {
  const close = doc.indexOf(`</${element.tag}>`, element.end);
  if (close === -1) throw new Error(`No </${element.tag}> after ${element.start}`);
  return doc.slice(element.end, close);
}

export function byTag(elements: readonly Element[], tag: string): Element[] {
  return elements.filter((e) => e.tag === tag);
}

export function byId(elements: readonly Element[], id: string): Element | undefined {
  return elements.find((e) => e.attrs.get('id') === id);
}

/** Elements whose start tag lies inside the given element (same-name nesting is not supported). */
export function within(doc: string, elements: readonly Element[], outer: Element): Element[] {
  const close = doc.indexOf(`</${outer.tag}>`, outer.end);
  return elements.filter((e) => e.start >= outer.end && e.start < close);
}
