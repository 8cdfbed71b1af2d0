import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENTITIES } from '@svc/api';
import { accessPatternsMarkdown } from '@svc/table';

/**
 * Item types written with an `entity` attribute but not described by `defineEntity`, each with
 * the file that writes it and why: their access patterns stay in that file's comment.
 * test/access-patterns.test.ts holds this list and ENTITIES, together, to every `entity: '…'` the
 * code writes.
 */
export const NOT_YET_DESCRIBED: Readonly<Record<string, { file: string; why: string }>> = {};

const INTRO = `# Access patterns of the table

Made by \`pnpm docs:entities\` from the entity descriptions (\`defineEntity\` in \`@svc/table\`); the
test \`test/access-patterns.test.ts\` fails when this file and the descriptions differ. Edit the
description, never this file.

One table (\`pk\`, \`sk\`), three overloaded global secondary indexes (\`gsi1\`, \`gsi2\`; \`due\`, sparse
and keys-only), one description per item type. The description gives the key prefix and the
composite keys, each index with the access pattern it serves, the attribute that guards writes
and the record's schema; from it come the keys, \`item\`/\`fromItem\`, the new and versioned writes,
and the IAM leading keys of the partitions a function may write
(\`infra/constructs/table-access.ts\`).

## Why not ElectroDB

ElectroDB's entity model is the one studied: a schema of attributes, a key template per index
(\`pk\`/\`sk\` composed from named attributes), the access pattern as the index's name, collections
across entities. The description here follows it, without taking the library:

- **Stored shape.** ElectroDB writes its own key format (\`$<service>#<attribute>_<value>\`,
  \`$<entity>_<version>#…\`) and stamps every item with \`__edb_e__\` and \`__edb_v__\`. Every item
  this service has already written (and the IAM leading-key patterns, the stream consumers, the
  search projections) uses \`PAYMENT#<uuid>\`-style keys and an \`entity\` attribute; adopting it
  would mean a migration of every item, or its key templates and attribute renames on every
  entity, which is most of what a description is.
- **One write path.** Writes go through \`transactWrite\` (one named error per failed condition,
  the read-your-writes listeners, a single write sent as a plain conditional Put at half the
  capacity of a transaction). ElectroDB sends its own commands through its own client.
- **Documents.** Payments, subscriptions and invoices keep their records as one JSON attribute
  (several times cheaper to read in full); ElectroDB's attributes map field to attribute.
- **Validation.** Records are zod schemas shared with the search projections and the event
  builders; ElectroDB validates its own attribute types.`;

/** docs/access-patterns.md as the descriptions make it. */
export function accessPatternsDocument(): string {
  const pending = Object.entries(NOT_YET_DESCRIBED).map(
    ([name, { file, why }]) => `- \`${name}\` (\`${file}\`): ${why}.`,
  );
  const notDescribed =
    pending.length === 0
      ? []
      : [
          '## Not described',
          '',
          'These item types keep their access patterns in the comment of the file that writes them:',
          '',
          ...pending,
          '',
        ];
  return [INTRO, '', ...notDescribed, accessPatternsMarkdown(ENTITIES)].join('\n');
}

export const ACCESS_PATTERNS_FILE = join(
  fileURLToPath(new URL('../../..', import.meta.url)),
  'docs',
  'access-patterns.md',
);

// `pnpm docs:entities`
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(ACCESS_PATTERNS_FILE, accessPatternsDocument());
  console.log(`Wrote ${ACCESS_PATTERNS_FILE}`);
}
