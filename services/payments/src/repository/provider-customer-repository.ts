import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, getItem, key, tableName } from '@svc/table';

/**
 * A supporter's customer at a provider (a Stripe Customer), so every payment and saved source of
 * one supporter is made for the same customer, per provider account and mode.
 *
 * | pattern                               | index | key                                                                        |
 * |---------------------------------------|-------|----------------------------------------------------------------------------|
 * | a supporter's customer at a provider  | table | pk = PROVIDER_CUSTOMER#<provider>#<test or live>#<account or platform>#<supporter uuid>, sk = PROVIDER_CUSTOMER |
 */
export interface CustomerScope {
  provider: string;
  testMode: boolean;
  /** The provider account (a Stripe Connect account), or undefined for the platform's own. */
  account?: string | undefined;
  supporterUuid: string;
}

const customerKey = (scope: CustomerScope) => ({
  pk: key(
    'PROVIDER_CUSTOMER',
    scope.provider,
    scope.testMode ? 'test' : 'live',
    scope.account ?? 'platform',
    scope.supporterUuid,
  ),
  sk: 'PROVIDER_CUSTOMER',
});

export async function findProviderCustomer(scope: CustomerScope): Promise<string | undefined> {
  const item = await getItem(customerKey(scope));
  return typeof item?.customer === 'string' ? item.customer : undefined;
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
        Item: { ...customerKey(scope), entity: 'provider_customer', customer },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return customer;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    return (await findProviderCustomer(scope)) ?? customer;
  }
}
