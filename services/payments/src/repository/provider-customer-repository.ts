import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, defineEntity, tableName } from '@svc/table';
import * as z from 'zod';

export interface CustomerScope {
  provider: string;
  testMode: boolean;
  /** The provider account (a Stripe Connect account), or undefined for the platform's own. */
  account?: string | undefined;
  supporterUuid: string;
}

interface ProviderCustomer {
  scope: CustomerScope;
  /** The provider's id of the customer (a Stripe Customer, `cus_…`). */
  customer: string;
}

/**
 * A supporter's customer at a provider (a Stripe Customer), so every payment and saved source of
 * one supporter is made for the same customer, per provider account and mode.
 */
export const PROVIDER_CUSTOMER = defineEntity<ProviderCustomer, CustomerScope>({
  name: 'provider_customer',
  summary: 'A supporter’s customer at a provider (a Stripe Customer), per provider account and mode.',
  prefix: 'PROVIDER_CUSTOMER',
  idShown: '<provider>#<test or live>#<account or platform>#<supporter uuid>',
  sort: 'PROVIDER_CUSTOMER',
  id: ({ scope }) => scope,
  idParts: (scope) => [
    scope.provider,
    scope.testMode ? 'test' : 'live',
    scope.account ?? 'platform',
    scope.supporterUuid,
  ],
  byKey: 'a supporter’s customer at a provider',
  // The scope is the key; only the customer is stored beside it.
  storage: {
    toAttributes: ({ customer }) => ({ customer }),
    fromAttributes: (item) => {
      const [, provider, mode, account, supporterUuid] = String(item.pk).split('#');
      const scope = {
        provider,
        testMode: mode === 'test',
        account: account === 'platform' ? undefined : account,
        supporterUuid,
      };
      return { scope, customer: item.customer };
    },
  },
  parse: (value) => providerCustomerSchema.parse(value),
});

const providerCustomerSchema = z.object({
  scope: z.object({
    provider: z.string(),
    testMode: z.boolean(),
    account: z.string().optional(),
    supporterUuid: z.string(),
  }),
  customer: z.string(),
});

export async function findProviderCustomer(scope: CustomerScope): Promise<string | undefined> {
  return (await PROVIDER_CUSTOMER.find(scope))?.customer;
}

/**
 * Remembers the customer made for a supporter; of two made at once, the first remembered wins and
 * is returned to both (the other customer stays unused at the provider: it holds nothing).
 */
export async function rememberProviderCustomer(scope: CustomerScope, customer: string): Promise<string> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: PROVIDER_CUSTOMER.item({ scope, customer }),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return customer;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    return (await findProviderCustomer(scope)) ?? customer;
  }
}
