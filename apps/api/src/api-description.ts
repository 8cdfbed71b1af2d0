import { buildOpenApi } from '@svc/http';
import { API_EXAMPLES, withExamples } from './api-examples';
import type { DomainName } from './domains';
import type { RouteEntry } from './route-table';
import { describeWebhooks, WEBHOOKS_DESCRIPTION } from './webhooks-description';
import { EVENT_DATA } from './wiring-event-data';

export const API_INFO = {
  title: 'svc fundraising payments API',
  version: '1.0.0',
  description: `Donations, donors, recurring donations, webhooks, onboarding and bank reconciliation for charities and their software partners.

**Authentication.** OAuth 2.0 client credentials: \`POST /oauth2/token\` with your \`client_id\` and \`client_secret\` answers an access token for 3600 s; send it as \`Authorization: Bearer <token>\`. What a token may reach is the client's grants (organisations, or single accounts).

**Errors.** Every error but 401 has the Nested shape: \`{"request_id", "error": {"http_code", "code", "message": [{"code", "property", "message"}]}}\`, one message per offending property. 401 has the Simple shape \`{"message"}\`. Bad input never changes anything.

**Idempotency.** Send \`Idempotency-Key\` on a POST: a repeat with the same key and body answers the first response again (\`Idempotent-Replayed: true\`), a different body is 422, one still running is 409. Keys live 24 hours.`,
};

/** The domains as the description groups them (tags), in the order a reader meets them. */
const TAGS: Record<DomainName, { name: string; description: string }> = {
  platform: { name: 'Platform', description: 'Health and this description' },
  identity: { name: 'Identity', description: 'Access tokens' },
  organisations: { name: 'Organisations', description: 'Organisations, accounts, addresses; operator approval' },
  payments: { name: 'Payments', description: 'Payments, refunds, payment sources and their approval pages' },
  supporters: { name: 'Supporters', description: 'Donor records' },
  subscriptions: { name: 'Subscriptions', description: 'Recurring donations: plans, subscriptions, invoices' },
  webhooks: { name: 'Webhooks', description: 'Endpoints, event subscriptions and delivery records' },
  onboarding: { name: 'Onboarding', description: 'Partners onboarding organisations, and the hosted page' },
  reconciliation: { name: 'Reconciliation', description: 'Bank files matched against payments' },
  portal: { name: 'Portal', description: 'Donors managing their own recurring gifts: settings and links' },
  receipts: { name: 'Receipts', description: 'Yearly donation receipts, their batches and documents; Gift Aid' },
};

/**
 * The API description (OpenAPI 3.1) of a route table (`describeApi` in api-document.ts: the
 * service's): every route, grouped by domain, and under `webhooks` every event the service emits.
 * Built from the schemas that validate requests, shape responses and build event data, with
 * examples taken from the contract tests (api-examples.ts).
 */
export function describeRoutes(table: readonly RouteEntry[]): Record<string, unknown> {
  const domainOf = new Map(table.map((entry) => [entry.route, entry.domain]));
  const document = buildOpenApi(
    table.map((entry) => entry.route),
    API_INFO,
    { tagOf: (route) => TAGS[domainOf.get(route) ?? 'platform'].name },
  );
  const { webhooks, schemas } = describeWebhooks(EVENT_DATA);
  const components = document.components as { schemas: Record<string, unknown> };
  return withExamples(
    {
      ...document,
      tags: [...Object.values(TAGS), { name: 'Events', description: WEBHOOKS_DESCRIPTION }],
      webhooks,
      components: { ...components, schemas: { ...components.schemas, ...schemas } },
    },
    API_EXAMPLES,
  );
}
