import { ConflictError } from '@svc/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { accessPatternsMarkdown, byUuid, defineEntity } from './entity';
import { StaleVersionError } from './retry';

const widgetSchema = z.object({
  uuid: z.string(),
  owner: z.string(),
  created: z.number().int(),
  version: z.number().int(),
  due: z.number().int().optional(),
});
type Widget = z.infer<typeof widgetSchema>;

const WIDGET = defineEntity<Widget, string>({
  name: 'widget',
  summary: 'A test item.',
  prefix: 'WIDGET',
  ...byUuid(),
  sort: 'WIDGET',
  byKey: 'widget by uuid',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'widgets of an owner',
      shown: 'gsi1pk = OWNER#<owner>, gsi1sk = <created>',
      keys: (widget) => ({ partition: `OWNER#${widget.owner}`, sort: String(widget.created) }),
    },
    {
      index: 'due',
      pattern: 'widgets due',
      shown: 'duepk = WIDGET_DUE, duesk = <due>',
      keys: (widget) => (widget.due === undefined ? undefined : { partition: 'WIDGET_DUE', sort: String(widget.due) }),
    },
  ],
  version: 'version',
  parse: (item) => widgetSchema.parse(item),
});

/** A JSON-document entity: its fields stored as one attribute. */
const NOTE = defineEntity<{ id: string; text: string }, readonly [string, number]>({
  name: 'note',
  summary: 'A note kept as a document.',
  prefix: 'NOTE',
  idShown: '<id>#<n>',
  sort: 'NOTE',
  id: (note) => [note.id.split('/')[0] ?? '', Number(note.id.split('/')[1])] as const,
  idParts: ([id, n]) => [id, n],
  byKey: 'note by id',
  storage: {
    toAttributes: (note) => ({ document: JSON.stringify(note) }),
    fromAttributes: (item) => JSON.parse(z.object({ document: z.string() }).parse(item).document),
  },
  parse: (value) => z.object({ id: z.string(), text: z.string() }).parse(value),
});

const widgetArbitrary = fc.record(
  {
    uuid: fc.uuid(),
    owner: fc.stringMatching(/^[a-z0-9-]{1,20}$/),
    created: fc.integer({ min: 0, max: 2 ** 40 }),
    version: fc.nat(),
    due: fc.integer({ min: 0, max: 2 ** 40 }),
  },
  { requiredKeys: ['uuid', 'owner', 'created', 'version'] },
);

describe('an entity description', () => {
  it('makes the key, the item and the record back, for any record (index keys only where present)', () => {
    fc.assert(
      fc.property(widgetArbitrary, (widget) => {
        const item = WIDGET.item(widget);
        expect(item).toMatchObject({ pk: `WIDGET#${widget.uuid}`, sk: 'WIDGET', entity: 'widget' });
        expect(item.gsi1pk).toBe(`OWNER#${widget.owner}`);
        expect('duepk' in item).toBe(widget.due !== undefined);
        expect(WIDGET.indexKeys(widget)).toEqual(
          Object.fromEntries(Object.entries(item).filter(([name]) => /^(gsi1|due)(pk|sk)$/.test(name))),
        );
        expect(WIDGET.fromItem(item)).toEqual(widget);
        expect(WIDGET.key(widget.uuid)).toEqual({ pk: item.pk, sk: item.sk });
      }),
    );
  });

  it('stores a document entity as its document, with keys of several parts', () => {
    const item = NOTE.item({ id: 'a/7', text: 'hello' });
    expect(item).toEqual({ pk: 'NOTE#a#7', sk: 'NOTE', entity: 'note', document: '{"id":"a/7","text":"hello"}' });
    expect(NOTE.fromItem(item)).toEqual({ id: 'a/7', text: 'hello' });
  });

  it('makes a sort key from the id where items share a partition (a child in its parent’s)', () => {
    const CHILD = defineEntity<{ parent: string; uuid: string }, readonly [string, string]>({
      name: 'child',
      summary: 'An item in its parent’s partition.',
      prefix: 'PARENT',
      idShown: '<parent>',
      sort: ([, uuid]) => `CHILD#${uuid}`,
      sortShown: 'CHILD#<uuid>',
      id: (child) => [child.parent, child.uuid] as const,
      idParts: ([parent]) => [parent],
      byKey: 'children of a parent, one child',
      parse: (value) => z.object({ parent: z.string(), uuid: z.string() }).parse(value),
    });
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), (parent, uuid) => {
        expect(CHILD.key([parent, uuid])).toEqual({ pk: `PARENT#${parent}`, sk: `CHILD#${uuid}` });
        expect(CHILD.item({ parent, uuid })).toMatchObject({ pk: `PARENT#${parent}`, sk: `CHILD#${uuid}` });
      }),
    );
    expect(CHILD.accessPatterns).toEqual([
      ['children of a parent, one child', 'table', 'pk = PARENT#<parent>, sk = CHILD#<uuid>'],
    ]);
  });

  it('keys the one item of a kind by its prefix alone, and grants exactly that partition', () => {
    const ONLY = defineEntity<{ value: string }, null>({
      name: 'only',
      summary: 'One item of its kind.',
      prefix: 'ONLY',
      single: true,
      idShown: '',
      sort: 'ITEM',
      id: () => null,
      idParts: () => [],
      byKey: 'the one item',
      parse: (value) => z.object({ value: z.string() }).parse(value),
    });
    expect(ONLY.key(null)).toEqual({ pk: 'ONLY', sk: 'ITEM' });
    expect(ONLY.fromItem(ONLY.item({ value: 'x' }))).toEqual({ value: 'x' });
    expect(ONLY.leadingKeys).toEqual(['ONLY']);
    expect(ONLY.accessPatterns).toEqual([['the one item', 'table', 'pk = ONLY, sk = ITEM']]);
  });

  it('refuses a stored item that is not a record of it', () => {
    expect(() => WIDGET.fromItem({ pk: 'WIDGET#x', sk: 'WIDGET', uuid: 'x' })).toThrow();
  });

  it('writes a new item only where none is, and replaces one only at the version read', () => {
    const widget: Widget = { uuid: 'u', owner: 'o', created: 1, version: 3 };
    const created = WIDGET.create(widget);
    expect(created.item).toEqual({
      Put: { Item: WIDGET.item(widget), ConditionExpression: 'attribute_not_exists(pk)' },
    });
    expect(created.onConditionFailed?.()).toBeInstanceOf(ConflictError);
    const named = WIDGET.create(widget, () => new Error('taken'));
    expect(named.onConditionFailed?.()).toEqual(new Error('taken'));

    const replaced = WIDGET.replace({ ...widget, version: 4 }, 3);
    expect(replaced.item).toEqual({
      Put: {
        Item: WIDGET.item({ ...widget, version: 4 }),
        ConditionExpression: '#version = :read',
        ExpressionAttributeNames: { '#version': 'version' },
        ExpressionAttributeValues: { ':read': 3 },
      },
    });
    expect(replaced.onConditionFailed?.()).toBeInstanceOf(StaleVersionError);
    expect(() => NOTE.replace({ id: 'a/1', text: '' }, 1)).toThrow(/no version attribute/);
  });

  it('says the IAM leading keys of its partitions and its access patterns, as the docs show them', () => {
    expect(WIDGET.leadingKeys).toEqual(['WIDGET#*']);
    expect(WIDGET.accessPatterns).toEqual([
      ['widget by uuid', 'table', 'pk = WIDGET#<uuid>, sk = WIDGET'],
      ['widgets of an owner', 'gsi1', 'gsi1pk = OWNER#<owner>, gsi1sk = <created>'],
      ['widgets due', 'due', 'duepk = WIDGET_DUE, duesk = <due>'],
    ]);
    const markdown = accessPatternsMarkdown([WIDGET, NOTE]);
    expect(markdown.indexOf('## note')).toBeLessThan(markdown.indexOf('## widget'));
    expect(markdown).toContain('| widgets of an owner | gsi1 | `gsi1pk = OWNER#<owner>, gsi1sk = <created>` |');
    expect(markdown).toContain('Writes guarded by: `version`.');
  });
});
