import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ENTITIES } from '@svc/api';
import { describe, expect, it } from 'vitest';
import { ACCESS_PATTERNS_FILE, accessPatternsDocument, NOT_YET_DESCRIBED } from '../apps/ops/src/access-patterns';
import { isTestCode } from './support/package-imports';
import { ROOT } from './support/service';

/** Every `entity: '…'` the code writes, with the file that writes it. */
function writtenEntities(): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) {
        if (entry !== 'node_modules') walk(path);
      } else if (path.endsWith('.ts') && !isTestCode(path) && !path.endsWith('table/src/entity.ts')) {
        // As an item's attribute (`entity: '…'`) or an update's value (`':entity': '…'`).
        for (const match of readFileSync(path, 'utf8').matchAll(/(?:\bentity|':entity'): '([a-z_]+)'/g)) {
          found.set(match[1] ?? '', relative(ROOT, path));
        }
      }
    }
  };
  for (const folder of ['packages', 'services']) walk(join(ROOT, folder));
  return found;
}

describe('the access patterns of the table', () => {
  it('are documented as the entity descriptions make them (run `pnpm docs:entities` after changing one)', () => {
    expect(readFileSync(ACCESS_PATTERNS_FILE, 'utf8')).toBe(accessPatternsDocument());
  });

  it('cover every item type the code writes: described, or listed as not yet, never both', () => {
    const described = ENTITIES.map((entity) => entity.description.name);
    expect(described.filter((name) => name in NOT_YET_DESCRIBED)).toEqual([]);
    const written = [...writtenEntities().keys()];
    expect(written.filter((name) => !described.includes(name) && !(name in NOT_YET_DESCRIBED))).toEqual([]);
    expect(Object.keys(NOT_YET_DESCRIBED).filter((name) => !written.includes(name))).toEqual([]);
    expect(described.length).toBeGreaterThanOrEqual(8);
  });

  it('give each entity its own partitions, but for the items kept in their parent’s', () => {
    const byPrefix = new Map<string, string[]>();
    for (const entity of ENTITIES) {
      for (const prefix of entity.leadingKeys)
        byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), entity.description.name]);
    }
    // Invoices live in their subscription's partition (one Query reads a subscription's invoices),
    // addresses in their owner's; the default-plan and one-URL markers and the endpoint counter
    // (one conditional write per create, issue 44) in the organisation's, unique by key. IAM's LeadingKeys
    // cannot tell them apart: whoever may write a marker may write the organisation's partition
    // (docs/security.md).
    expect(new Map([...byPrefix].filter(([, names]) => names.length > 1))).toEqual(
      new Map([
        ['ORG#*', ['organisation', 'address', 'default_plan', 'webhook_url', 'webhook_endpoint_count']],
        ['ACCOUNT#*', ['account', 'address']],
        ['SUBSCRIPTION#*', ['subscription', 'invoice']],
      ]),
    );
  });
});
