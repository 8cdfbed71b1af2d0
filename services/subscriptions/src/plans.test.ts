import { beforeAll, describe, expect, it } from 'vitest';
import { call, tokenFor } from '../../../test/support/api';
import { GLOBAL_DEFAULT_PLAN_UUID } from './domain/plans';
import { api, DEMO, ok, setup } from './test-support';

beforeAll(setup);

const detail = (response: { json: { error: { message: Array<{ code: string; property: string }> } } }) =>
  response.json.error.message.map(({ code, property }) => ({ code, property }));

describe('subscription plans', () => {
  it('always lists the global default plan, with the contract default dunning', async () => {
    const plans = await ok('GET', '/subscription-plans');
    expect(plans[0]).toMatchObject({
      uuid: GLOBAL_DEFAULT_PLAN_UUID,
      is_default: true,
      dunning_configuration: {
        retry_delays_days: [2, 4, 6],
        max_consecutive_failed_invoices: 3,
        on_max_failed: 'cancel',
      },
    });
    const single = await ok('GET', `/subscription-plans/${GLOBAL_DEFAULT_PLAN_UUID}`);
    expect(single.uuid).toBe(GLOBAL_DEFAULT_PLAN_UUID);
    const change = await api('PATCH', `/subscription-plans/${GLOBAL_DEFAULT_PLAN_UUID}`, { name: 'Mine' });
    expect(change.status).toBe(403);
  });

  it('creates, reads and updates a plan, filling dunning defaults', async () => {
    const plan = await ok(
      'POST',
      '/subscription-plans',
      { organisation_uuid: DEMO.org, name: 'Monthly givers', dunning_configuration: { retry_delays_days: [1, 3] } },
      201,
    );
    expect(plan).toMatchObject({
      organisation_uuid: DEMO.org,
      name: 'Monthly givers',
      is_default: false,
      dunning_configuration: { retry_delays_days: [1, 3], max_consecutive_failed_invoices: 3, on_max_failed: 'cancel' },
      notification_configuration: { supporter_receipts: false, failure_recipient_emails: [] },
    });
    expect(await ok('GET', `/subscription-plans/${plan.uuid}`)).toEqual(plan);
    const updated = await ok('PATCH', `/subscription-plans/${plan.uuid}`, {
      name: 'Renamed',
      dunning_configuration: { on_max_failed: 'suspend' },
      notification_configuration: { failure_recipient_emails: ['finance@example.org'] },
    });
    expect(updated.name).toBe('Renamed');
    expect(updated.dunning_configuration).toEqual({
      retry_delays_days: [1, 3],
      max_consecutive_failed_invoices: 3,
      on_max_failed: 'suspend',
    });
    expect(updated.notification_configuration.failure_recipient_emails).toEqual(['finance@example.org']);
    const listed = await ok('GET', `/subscription-plans?organisation_uuid=${DEMO.org}`);
    expect(listed.map((p: { uuid: string }) => p.uuid)).toContain(plan.uuid);
  });

  it.each([
    [{ name: '' }, 'name', 'error.validation.not_blank'],
    [{ dunning_configuration: { retry_delays_days: [0] } }, 'dunning_configuration.retry_delays_days.0', undefined],
    [
      { dunning_configuration: { retry_delays_days: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] } },
      'dunning_configuration.retry_delays_days',
      undefined,
    ],
    [
      { dunning_configuration: { max_consecutive_failed_invoices: 0 } },
      'dunning_configuration.max_consecutive_failed_invoices',
      undefined,
    ],
    [{ dunning_configuration: { on_max_failed: 'explode' } }, 'dunning_configuration.on_max_failed', undefined],
    [{ dunning_configuration: { surprise: 1 } }, 'dunning_configuration.surprise', undefined],
    [
      { notification_configuration: { failure_recipient_emails: ['not-an-email'] } },
      'notification_configuration.failure_recipient_emails.0',
      undefined,
    ],
  ])('refuses %j with a 400 naming the field', async (fields, property, code) => {
    const response = await api('POST', '/subscription-plans', { organisation_uuid: DEMO.org, name: 'x', ...fields });
    expect(response.status, response.text).toBe(400);
    const details = detail(response);
    expect(details.map((d: { property: string }) => d.property)).toContain(property);
    if (code) expect(details[0]?.code).toBe(code);
  });

  it('allows one default per organisation, also under concurrent requests', async () => {
    const attempts = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        api('POST', '/subscription-plans', { organisation_uuid: DEMO.org, name: `Default ${i}`, is_default: true }),
      ),
    );
    const created = attempts.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    expect(attempts.filter((r) => r.status === 409)).toHaveLength(4);
    const first = created[0]?.json;
    const second = await ok('POST', '/subscription-plans', { organisation_uuid: DEMO.org, name: 'Next' }, 201);
    const refused = await api('PATCH', `/subscription-plans/${second.uuid}`, { is_default: true });
    expect(refused.status).toBe(409);
    expect(detail(refused)[0]).toEqual({ code: 'error.plan.default_exists', property: 'is_default' });
    // Replacing the default: unset the first, then set the second.
    await ok('PATCH', `/subscription-plans/${first.uuid}`, { is_default: false });
    expect((await ok('PATCH', `/subscription-plans/${second.uuid}`, { is_default: true })).is_default).toBe(true);
    // Subscriptions without a plan now use it.
    const plans = await ok('GET', '/subscription-plans');
    expect(plans.filter((p: { is_default: boolean }) => p.is_default).map((p: { uuid: string }) => p.uuid)).toEqual([
      GLOBAL_DEFAULT_PLAN_UUID,
      second.uuid,
    ]);
  });

  it('lets only an organisation-wide plan be the default', async () => {
    const scoped = await api('POST', '/subscription-plans', {
      organisation_uuid: DEMO.org,
      account_uuid: DEMO.account,
      name: 'Account default',
      is_default: true,
    });
    expect(scoped.status).toBe(400);
    expect(detail(scoped)[0]).toEqual({ code: 'error.validation.not_valid', property: 'is_default' });
    const plan = await ok(
      'POST',
      '/subscription-plans',
      { organisation_uuid: DEMO.org, account_uuid: DEMO.account, name: 'Account plan' },
      201,
    );
    expect((await api('PATCH', `/subscription-plans/${plan.uuid}`, { is_default: true })).status).toBe(400);
  });

  it('keeps other tenants out', async () => {
    const plan = await ok('POST', '/subscription-plans', { organisation_uuid: DEMO.org, name: 'Private' }, 201);
    const other = await tokenFor(DEMO.otherClient);
    expect((await call('GET', `/subscription-plans/${plan.uuid}`, { token: other })).status).toBe(403);
    expect(
      (await call('PATCH', `/subscription-plans/${plan.uuid}`, { token: other, body: { name: 'x' } })).status,
    ).toBe(403);
    expect(
      (await call('POST', '/subscription-plans', { token: other, body: { organisation_uuid: DEMO.org, name: 'x' } }))
        .status,
    ).toBe(403);
    const theirs = await call('GET', '/subscription-plans', { token: other });
    expect(theirs.json.map((p: { uuid: string }) => p.uuid)).toEqual([GLOBAL_DEFAULT_PLAN_UUID]);
    expect((await call('GET', `/subscription-plans?organisation_uuid=${DEMO.org}`, { token: other })).status).toBe(403);
    expect((await call('GET', '/subscription-plans')).status).toBe(401);
  });
});
