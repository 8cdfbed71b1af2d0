import type { DomainName, RouteEntry } from '@svc/api';
import type { AnyRoute, HttpMethod } from '@svc/http';
import { describe, expect, it } from 'vitest';
import { TABLE_READ_ACTIONS, TABLE_WRITE_ACTIONS, tableAccessFor, tableGrantFor } from '../constructs/table-access';

function entry(domain: DomainName, method: HttpMethod, auth: AnyRoute['auth'], readOnly = false): RouteEntry {
  const path = `/${domain}/${method.toLowerCase()}`;
  const route: AnyRoute = {
    method,
    path,
    auth,
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
  it('is its tier where nothing narrows it: every read and write, Query on every index', () => {
    expect(tableGrantFor('payments')).toEqual({
      tableActions: [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS],
      indexes: ['gsi1', 'gsi2', 'due'],
    });
    expect(tableGrantFor('platform')).toEqual({ tableActions: [], indexes: [] });
  });

  it('gives organisations UpdateItem, which the operator approval routes send', () => {
    expect(tableGrantFor('organisations').tableActions).toContain('dynamodb:UpdateItem');
  });

  it('narrows onboarding to what its code sends: no table Query, no BatchWriteItem, gsi1 and gsi2 only', () => {
    expect(tableGrantFor('onboarding')).toEqual({
      tableActions: [
        'dynamodb:GetItem',
        'dynamodb:BatchGetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
        'dynamodb:ConditionCheckItem',
      ],
      indexes: ['gsi1', 'gsi2'],
    });
  });

  it('narrows reconciliation to reads, Query on gsi1 and the idempotency records of its one POST', () => {
    expect(tableAccessFor('reconciliation')).toBe('readWrite');
    expect(tableGrantFor('reconciliation')).toEqual({
      tableActions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      indexes: ['gsi1'],
    });
  });

  it('refuses a narrowing that grants more than the route table implies', () => {
    expect(() => tableGrantFor('onboarding', [entry('onboarding', 'GET', 'token')])).toThrow(
      /onboarding names dynamodb:PutItem.*beyond its route-derived read/,
    );
    expect(() => tableGrantFor('onboarding', [])).toThrow(
      /Query on gsi1, Query on gsi2, beyond its route-derived none/,
    );
  });
});
