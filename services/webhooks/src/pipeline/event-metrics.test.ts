import { recordMetric } from '@svc/core';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Envelope } from '../repository/webhook-repository';
import { recordEventMetrics } from './event-metrics';

vi.mock('@svc/core', async (original) => ({
  ...(await original<typeof import('@svc/core')>()),
  recordMetric: vi.fn(),
}));

const envelope = (name: string, data: Record<string, unknown> = {}): Envelope => ({
  uuid: 'e',
  name,
  created: 1,
  object: 'x',
  object_uuid: 'o',
  organisation_uuid: 'org',
  sequence: 1,
  data,
});

beforeEach(() => {
  vi.mocked(recordMetric).mockClear();
});

describe('the business metrics of events', () => {
  it('maps each outcome, step and report to its metric, and ignores the rest', () => {
    recordEventMetrics([
      envelope('svc.payments.payment.cancelled', { payment_method: 'twint', test_mode: false }),
      envelope('svc.payments.payment.succeeded', { test_mode: true }),
      envelope('svc.payments.refund.succeeded'),
      envelope('svc.subscriptions.charge_attempt.failed'),
      envelope('svc.subscriptions.invoice.paid'),
      envelope('svc.subscriptions.subscription.suspended'),
      envelope('svc.reconciliation.reconciliation_report.created', {
        summary: { rows: 5, matched: 3, unmatched: 2, errors: 0 },
      }),
      envelope('svc.subscriptions.subscription.created'),
      envelope('svc.organisations.organisation.approved'),
    ]);
    expect(vi.mocked(recordMetric).mock.calls).toEqual([
      ['PaymentOutcomes', 1, { outcome: 'cancelled', mode: 'live' }],
      ['PaymentOutcomesByMethod', 1, { outcome: 'cancelled', mode: 'live', payment_method: 'twint' }],
      ['PaymentOutcomes', 1, { outcome: 'succeeded', mode: 'test' }],
      ['Refunds', 1],
      ['ChargeAttemptsFailed', 1],
      ['InvoicesPaid', 1],
      ['SubscriptionsSuspended', 1],
      ['ReconciliationRows', 3, { result: 'matched' }],
      ['ReconciliationRows', 2, { result: 'unmatched' }],
    ]);
  });
});
