import { describe, expect, it } from 'vitest';
import { byCreation, byField } from './sorting';
import type { Supporter } from './supporter';

const ORG = '6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60';
let sequence = 0;
function supporter(fields: Partial<Supporter>): Supporter {
  sequence += 1;
  return {
    uuid: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
    organisation_uuid: ORG,
    created: 1_700_000_000 + sequence,
    ...fields,
  };
}

describe('supporter ordering', () => {
  it('compares digit runs as numbers and ignores case before breaking ties', () => {
    const list = ['10000', '9000', '8001'].map((postal_code) => supporter({ postal_code }));
    expect(list.sort(byField('postal_code', 'asc')).map((s) => s.postal_code)).toEqual(['8001', '9000', '10000']);
    const names = ['b', 'A', 'a', 'B'].map((first_name) => supporter({ first_name }));
    expect(names.sort(byField('first_name', 'asc')).map((s) => s.first_name)).toEqual(['a', 'A', 'b', 'B']);
  });

  it('puts supporters without the field last in both directions, in creation order', () => {
    const missingFirst = supporter({});
    const yes = supporter({ email_permission: true });
    const missingSecond = supporter({});
    const no = supporter({ email_permission: false });
    const list = [missingSecond, yes, missingFirst, no];
    expect([...list].sort(byField('email_permission', 'asc'))).toEqual([no, yes, missingFirst, missingSecond]);
    expect([...list].sort(byField('email_permission', 'desc'))).toEqual([yes, no, missingFirst, missingSecond]);
  });

  it('keeps creation order among equal values, whatever the direction', () => {
    const first = supporter({ city: 'Bern' });
    const second = supporter({ city: 'Bern' });
    const basel = supporter({ city: 'Basel' });
    expect([second, basel, first].sort(byField('city', 'desc'))).toEqual([first, second, basel]);
  });

  it('orders objects by their key-sorted JSON text', () => {
    const b = supporter({ custom_parameters: { x: 'b', a: 'z' } });
    const a = supporter({ custom_parameters: { a: 'a', x: 'z' } });
    expect([b, a].sort(byField('custom_parameters', 'asc'))).toEqual([a, b]);
  });

  it('orders by creation, then uuid, in the index order', () => {
    const early = supporter({ created: 5, uuid: 'b' });
    const tieA = supporter({ created: 6, uuid: 'a' });
    const tieB = supporter({ created: 6, uuid: 'b' });
    expect([tieB, early, tieA].sort(byCreation('asc'))).toEqual([early, tieA, tieB]);
    expect([tieB, early, tieA].sort(byCreation('desc'))).toEqual([tieB, tieA, early]);
  });
});
