import type { DomainName, RouteEntry } from '@svc/api';
import type { AnyRoute, HttpMethod } from '@svc/http';
import { describe, expect, it } from 'vitest';
import {
  type TableGrant,
  tableAccessFor,
  tableGrantFor,
  writeGrant,
  writeStatementsOf,
} from '../constructs/table-access';

function entry(domain: DomainName, method: HttpMethod, auth: AnyRoute['auth'], readOnly = false): RouteEntry {
  const path = `/${domain}/${method.toLowerCase()}`;
  const route: AnyRoute = {
    method,
    path,
    ...(auth === 'none' ? { auth, limit: 'address' as const } : { auth }),
    operationId: `${domain}${method}`,
    summary: 'test route',
    responses: {},
    ...(readOnly ? { readOnly } : {}),
    handle: async () => ({ status: 204 }),
  };
  return { domain, route, key: `${method} ${path}` };
}

describe('table access derived from the route table', () => {
  it('is none for a domain that serves only public routes', () => {
    expect(tableAccessFor('platform', [entry('platform', 'GET', 'none')])).toBe('none');
  });

  it('is read for a domain whose authenticated routes only read (the authenticator reads the caller)', () => {
    expect(tableAccessFor('organisations', [entry('organisations', 'GET', 'token')])).toBe('read');
  });

  it('is read/write once the domain serves an authenticated POST (idempotency records)', () => {
    const routes = [entry('organisations', 'GET', 'token'), entry('organisations', 'POST', 'token')];
    expect(tableAccessFor('organisations', routes)).toBe('readWrite');
  });

  it.each(['PUT', 'PATCH', 'DELETE'] as const)(
    'is read/write for an authenticated %s, which changes items',
    (method) => {
      expect(tableAccessFor('organisations', [entry('organisations', method, 'token')])).toBe('readWrite');
    },
  );

  it('is read/write for a public POST that changes state (the simulated provider approval form)', () => {
    expect(tableAccessFor('payments', [entry('payments', 'POST', 'none')])).toBe('readWrite');
  });

  it('stays read for an authenticated POST marked readOnly (searches keep no idempotency records)', () => {
    expect(tableAccessFor('organisations', [entry('organisations', 'POST', 'token', true)])).toBe('read');
  });

  it('ignores other domains routes', () => {
    expect(tableAccessFor('platform', [entry('organisations', 'POST', 'token')])).toBe('none');
  });

  it('keeps identity read/write although its token route is public: it writes clients and public keys', () => {
    expect(tableAccessFor('identity', [entry('identity', 'POST', 'none')])).toBe('readWrite');
  });

  it('gives the current route table platform none and the others read/write (organisations: operator approval)', () => {
    expect(
      (['platform', 'organisations', 'identity', 'payments', 'supporters', 'onboarding'] as const).map((domain) =>
        tableAccessFor(domain),
      ),
    ).toEqual(['none', 'readWrite', 'readWrite', 'readWrite', 'readWrite', 'readWrite']);
  });
});

describe('the table grant of a domain function', () => {
  const AUTHENTICATOR = ['CLIENT#*', 'SIGNING_KEYS'];

  it("scopes payments to its actions and partitions: no Query, no delete, no index, never another domain's private items", () => {
    expect(tableGrantFor('payments')).toEqual({
      reads: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
      indexes: [],
      readKeys: [
        'ORG#*',
        'ACCOUNT#*',
        // A recurring charge settled, returned or paid late is dunned by its plan (issue 45, point 3).
        'PLAN#*',
        'PAYMENT#*',
        'PAYMENT_SOURCE#*',
        'PROVIDER_EVENT#*',
        'PROVIDER_CUSTOMER#*',
        'SUPPORTER#*',
        'SUBSCRIPTION#*',
        'PAYMENT_ROUTE#*',
        'PROVIDER_HEALTH#*',
        'EARLY_CALLBACK#*',
        'RATE_LIMIT#*',
        ...AUTHENTICATOR,
      ],
      writes: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
      writeKeys: [
        'PAYMENT#*',
        'PAYMENT_SOURCE#*',
        'PROVIDER_EVENT#*',
        'PROVIDER_CUSTOMER#*',
        'SUPPORTER#*',
        'SUBSCRIPTION#*',
        'PAYMENT_ROUTE#*',
        'PROVIDER_HEALTH#*',
        'PROVIDER_RATE#*',
        'EARLY_CALLBACK#*',
        'IDEMPOTENCY#*',
        'RATE_LIMIT#*',
      ],
      writeStatements: expect.any(Array),
    });
    // Each partition with the actions its code sends there: what is put is never updated in
    // place, counters are never put, and only idempotency records are both.
    expect(writeStatementsOf(tableGrantFor('payments'))).toEqual([
      {
        actions: ['dynamodb:PutItem'],
        keys: [
          'PAYMENT#*',
          'PAYMENT_SOURCE#*',
          'PROVIDER_EVENT#*',
          'PROVIDER_CUSTOMER#*',
          'SUPPORTER#*',
          'SUBSCRIPTION#*',
          'PAYMENT_ROUTE#*',
        ],
      },
      {
        actions: ['dynamodb:UpdateItem'],
        keys: ['PROVIDER_HEALTH#*', 'PROVIDER_RATE#*', 'EARLY_CALLBACK#*', 'RATE_LIMIT#*'],
      },
      { actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], keys: ['IDEMPOTENCY#*'] },
    ]);
    expect(tableGrantFor('platform')).toEqual({ reads: [], indexes: [], writes: [], writeKeys: [] });
  });

  it('grants no domain PutItem or DeleteItem on the rate-limit counters, which are only ever updated', () => {
    for (const domain of [
      'identity',
      'organisations',
      'payments',
      'supporters',
      'subscriptions',
      'webhooks',
      'onboarding',
      'reconciliation',
    ] as const) {
      const counters = writeStatementsOf(tableGrantFor(domain)).filter((statement) =>
        statement.keys.includes('RATE_LIMIT#*'),
      );
      expect(counters, domain).toEqual([{ actions: ['dynamodb:UpdateItem'], keys: expect.any(Array) }]);
    }
  });

  it('merges the actions of a partition named twice, and refuses statements that disagree with the summary', () => {
    const grant = writeGrant(
      { actions: ['dynamodb:PutItem'], keys: ['A#*', 'B#*'] },
      { actions: ['dynamodb:UpdateItem'], keys: ['B#*', 'C#*'] },
    );
    expect(writeStatementsOf({ reads: [], indexes: [], ...grant })).toEqual([
      { actions: ['dynamodb:PutItem'], keys: ['A#*'] },
      { actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], keys: ['B#*'] },
      { actions: ['dynamodb:UpdateItem'], keys: ['C#*'] },
    ]);
    const disagreeing: TableGrant = { reads: [], indexes: [], ...grant, writeKeys: ['A#*'] };
    expect(() => writeStatementsOf(disagreeing)).toThrow(/must name exactly/);
    // Without statements, every action on every key (the grants of one action).
    expect(
      writeStatementsOf({ reads: [], indexes: [], writes: ['dynamodb:PutItem'], writeKeys: ['DELIVERY#*'] }),
    ).toEqual([{ actions: ['dynamodb:PutItem'], keys: ['DELIVERY#*'] }]);
  });

  it("adds what the routes imply: the authenticator's keys to read for token routes, idempotency records to write for authenticated POSTs", () => {
    const readOnly = tableGrantFor('supporters', [
      entry('supporters', 'GET', 'token'),
      entry('supporters', 'PATCH', 'token'),
    ]);
    expect(readOnly.readKeys).toEqual(['ORG#*', 'SUPPORTER#*', 'RATE_LIMIT#*', ...AUTHENTICATOR]);
    // Every authenticated request counts against its client's limit.
    expect(readOnly.writeKeys).toEqual(['SUPPORTER#*', 'RATE_LIMIT#*']);
    const posting = tableGrantFor('supporters', [entry('supporters', 'POST', 'token')]);
    expect(posting.writeKeys).toContain('IDEMPOTENCY#*');
    // A readOnly POST (a search) keeps no idempotency record.
    const searching = tableGrantFor('supporters', [
      entry('supporters', 'PATCH', 'token'),
      entry('supporters', 'POST', 'token', true),
    ]);
    expect(searching.writeKeys).not.toContain('IDEMPOTENCY#*');
  });

  it('never lets a domain but identity write the credentials it reads: clients and signing keys', () => {
    for (const domain of [
      'organisations',
      'payments',
      'supporters',
      'subscriptions',
      'webhooks',
      'onboarding',
      'reconciliation',
    ] as const) {
      const grant = tableGrantFor(domain);
      expect(grant.readKeys, domain).toEqual(expect.arrayContaining(AUTHENTICATOR));
      expect(
        grant.writeKeys.filter((key) => key.startsWith('CLIENT') || key.startsWith('SIGNING')),
        domain,
      ).toEqual([]);
    }
    // The token route counts its callers' addresses against the credentials limit; the signing
    // keys are put whole, never updated, and nothing but identity names them in a write.
    expect(tableGrantFor('identity').writeKeys).toEqual(['SIGNING_KEYS', 'RATE_LIMIT#*']);
    expect(writeStatementsOf(tableGrantFor('identity'))).toEqual([
      { actions: ['dynamodb:PutItem'], keys: ['SIGNING_KEYS'] },
      { actions: ['dynamodb:UpdateItem'], keys: ['RATE_LIMIT#*'] },
    ]);
    // Onboarding may change a partner client's grants, and no other attribute of it.
    expect(tableGrantFor('onboarding').attributeUpdates).toEqual([
      expect.objectContaining({ leadingKeys: ['CLIENT#*'], attributes: ['pk', 'sk', 'grants', 'grants_version'] }),
    ]);
  });

  it('gives organisations Query in its partitions and Put (approval), plus the idempotency records of its POST', () => {
    const grant = tableGrantFor('organisations');
    expect(grant.reads).toEqual(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query']);
    expect(grant.writes).toEqual(['dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(grant.writeKeys).toEqual(['ORG#*', 'IDEMPOTENCY#*', 'RATE_LIMIT#*']);
  });

  it('narrows onboarding to what its code sends: no table Query, no BatchWriteItem, gsi1 and gsi2 only', () => {
    const grant = tableGrantFor('onboarding');
    expect(grant.reads).toEqual(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem']);
    expect(grant.writes).toEqual(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']);
    expect(grant.indexes).toEqual(['gsi1', 'gsi2']);
    // Deletes reach a partner's link only; updates the failure counters only.
    const statements = writeStatementsOf(grant);
    expect(statements.filter((statement) => statement.actions.includes('dynamodb:DeleteItem'))).toEqual([
      { actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'], keys: ['PARTNER_LINK#*'] },
    ]);
    expect(
      new Set(
        statements.filter((statement) => statement.actions.includes('dynamodb:UpdateItem')).flatMap((s) => s.keys),
      ),
    ).toEqual(new Set(['ONBOARDING#*', 'PASSWORD_GUESSES#*', 'IDEMPOTENCY#*', 'RATE_LIMIT#*']));
    expect(grant.writeKeys).toEqual(expect.arrayContaining(['ONBOARDING#*', 'USER_EMAIL#*']));
    expect(grant.readKeys).not.toContain('PAYMENT#*');
  });

  it('narrows reconciliation to reads, Query on gsi1 and the idempotency records of its one POST', () => {
    expect(tableAccessFor('reconciliation')).toBe('readWrite');
    expect(tableGrantFor('reconciliation')).toEqual({
      reads: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
      indexes: ['gsi1'],
      // Idempotency records are put and updated, never read.
      readKeys: ['ORG#*', 'RECON_SOURCE#*', 'RECON_REPORT#*', 'RATE_LIMIT#*', ...AUTHENTICATOR],
      indexKeys: ['ORG#*#RECON_REPORTS'],
      writes: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
      writeKeys: ['IDEMPOTENCY#*', 'RATE_LIMIT#*'],
      writeStatements: [
        { actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], keys: ['IDEMPOTENCY#*'] },
        { actions: ['dynamodb:UpdateItem'], keys: ['RATE_LIMIT#*'] },
      ],
    });
  });

  it('refuses a scope that grants more than the route table implies', () => {
    expect(() => tableGrantFor('onboarding', [entry('onboarding', 'GET', 'token')])).toThrow(
      /onboarding names .*dynamodb:PutItem.*beyond its route-derived read/,
    );
    expect(() => tableGrantFor('onboarding', [])).toThrow(/beyond its route-derived none/);
  });

  it('refuses a domain with table access and no scope: its writes would reach every partition', () => {
    expect(() => tableGrantFor('platform', [entry('platform', 'POST', 'token')])).toThrow(/no scope/);
  });
});
