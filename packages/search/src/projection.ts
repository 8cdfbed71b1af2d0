import { isRecord, splitFieldPath } from './field-path';
import type { SearchDocument } from './search-response';

/**
 * `includes` and `excludes` shape each hit. With includes, a hit keeps only the named paths
 * (nested structure kept: `amount.value` gives `{"amount": {"value": "1000"}}`); an object or
 * array left empty by that is dropped. Excludes then remove the named paths. Paths go through
 * arrays as field paths do. Untouched parts are shared with the input document, never copied, so
 * hits are read-only views.
 */
export type Projection = (document: SearchDocument) => SearchDocument;

/** A path set as a tree; `true` selects the whole subtree below a segment. */
type PathTree = Map<string, PathTree | true>;

export function compileProjection(includes: readonly string[], excludes: readonly string[]): Projection {
  const included = includes.length > 0 ? pathTree(includes) : undefined;
  const excluded = excludes.length > 0 ? pathTree(excludes) : undefined;
  return (document) => {
    const kept = included ? (includeRecord(document, included) ?? {}) : document;
    return excluded ? excludeRecord(kept, excluded) : kept;
  };
}

function pathTree(paths: readonly string[]): PathTree {
  const root: PathTree = new Map();
  for (const path of paths) {
    const segments = splitFieldPath(path);
    let node = root;
    for (const [index, segment] of segments.entries()) {
      const child = node.get(segment);
      if (child === true) break;
      if (index === segments.length - 1) {
        node.set(segment, true);
        break;
      }
      const next: PathTree = child ?? new Map();
      node.set(segment, next);
      node = next;
    }
  }
  return root;
}

function includeValue(value: unknown, tree: PathTree): unknown {
  if (Array.isArray(value)) {
    const kept = value.map((element) => includeValue(element, tree)).filter((element) => element !== undefined);
    return kept.length > 0 ? kept : undefined;
  }
  return isRecord(value) ? includeRecord(value, tree) : undefined;
}

function includeRecord(record: SearchDocument, tree: PathTree): SearchDocument | undefined {
  const entries: [string, unknown][] = [];
  for (const [key, subtree] of tree) {
    if (!Object.hasOwn(record, key)) continue;
    const value = subtree === true ? record[key] : includeValue(record[key], subtree);
    if (value !== undefined) entries.push([key, value]);
  }
  // fromEntries defines own properties, so a key such as `__proto__` stays data.
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

function excludeValue(value: unknown, tree: PathTree): unknown {
  if (Array.isArray(value)) return value.map((element) => excludeValue(element, tree));
  return isRecord(value) ? excludeRecord(value, tree) : value;
}

function excludeRecord(record: SearchDocument, tree: PathTree): SearchDocument {
  if (![...tree.keys()].some((key) => Object.hasOwn(record, key))) return record;
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(record)) {
    const subtree = tree.get(key);
    if (subtree === undefined) entries.push([key, value]);
    else if (subtree !== true) entries.push([key, excludeValue(value, subtree)]);
  }
  return Object.fromEntries(entries);
}
