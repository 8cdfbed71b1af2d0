import { EVENT_NAMES, type EventDataBuilders, type EventObject } from '@svc/events';
import { jsonSchemaOf, type SharedSchemas } from '@svc/http';
import { RETRY_DELAYS_SECONDS } from '@svc/webhooks';

type Json = Record<string, unknown>;

const schemaName = (object: string) =>
  object
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

const objectOf = (name: string) => name.split('.')[2] as EventObject;

const retries = RETRY_DELAYS_SECONDS.map((seconds) =>
  seconds % 3600 === 0 ? `${seconds / 3600} h` : `${seconds / 60} min`,
).join(', ');

/** How a receiver knows the request is ours, and what its answer does: said once for every event. */
export const WEBHOOKS_DESCRIPTION = `Each event is POSTed as \`{"event": {…}}\` to every webhook endpoint whose event subscription matches it.

**Verifying a request.** With an \`hmac_key\` on the endpoint, \`X-Svc-Signature: t=<unix seconds>,v1=<hex>\` carries HMAC-SHA256 over \`<t>.<raw body>\` with that key: recompute it over the bytes received, compare in constant time, and refuse a \`t\` far from your clock. \`X-Hmac\` is the HMAC-SHA256 of the body alone (older receivers). With a username and password on the endpoint, the request also carries HTTP Basic \`Authorization\`.

**Answering.** Any 2xx within 10 s delivers the event. 410 Gone stops deliveries to the endpoint for this event. Anything else, or no answer, is retried after ${retries} (${RETRY_DELAYS_SECONDS.length + 1} attempts in all), each retry with \`X-Svc-Delivery-Attempt\` one higher. Deliveries are at least once: de-duplicate on \`X-Svc-Event-Uuid\` and order by \`event.sequence\` per object.`;

const header = (name: string, description: string, required = true) => ({
  name,
  in: 'header',
  required,
  description,
  schema: { type: 'string' },
});

const HEADERS = [
  header('X-Svc-Event-Uuid', 'The event, the same on every attempt: de-duplicate on it'),
  header('X-Svc-Delivery-Attempt', '1 for the first attempt, then one higher for each retry'),
  header(
    'X-Svc-Signature',
    '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, when the endpoint has an hmac_key',
    false,
  ),
  header('X-Hmac', 'Hex HMAC-SHA256 of the body, when the endpoint has an hmac_key', false),
  header('Authorization', 'HTTP Basic, when the endpoint has a username and password', false),
];

function envelope(object: EventObject, name: string): Json {
  return {
    type: 'object',
    required: ['event'],
    additionalProperties: false,
    properties: {
      event: {
        type: 'object',
        required: ['uuid', 'name', 'created', 'object', 'object_uuid', 'organisation_uuid', 'sequence', 'data'],
        additionalProperties: false,
        properties: {
          uuid: { type: 'string', format: 'uuid' },
          name: { const: name },
          created: { type: 'integer', description: 'Unix seconds' },
          object: { const: object },
          object_uuid: { type: 'string', format: 'uuid' },
          organisation_uuid: { type: 'string', format: 'uuid' },
          account_uuid: { type: 'string', format: 'uuid' },
          sequence: { type: 'integer', description: "Counts the object's events: 1, 2, …" },
          data: { $ref: `#/components/schemas/${schemaName(object)}` },
        },
      },
    },
  };
}

/**
 * The `webhooks` section of the API description (OpenAPI 3.1): every event the service emits,
 * its envelope, and its `data` schema, which is the schema the pipeline's builder for that object
 * is typed by. The `data` schemas go to `components.schemas`, one per object.
 */
export function describeWebhooks(eventData: EventDataBuilders): { webhooks: Json; schemas: Json } {
  const schemas: SharedSchemas = {};
  const webhooks: Json = {};
  for (const name of EVENT_NAMES) {
    const object = objectOf(name);
    const data = eventData[object];
    if (!data) throw new Error(`No event data for ${object} (event ${name})`);
    schemas[schemaName(object)] ??= jsonSchemaOf(data.schema, 'output', schemas);
    webhooks[name] = {
      post: {
        operationId: `event:${name}`,
        summary: name,
        description: `The ${object.replaceAll('_', ' ')} as its GET returns it is the event's \`data\`. See the webhooks introduction for signatures and retries.`,
        tags: ['Events'],
        parameters: HEADERS,
        requestBody: { required: true, content: { 'application/json': { schema: envelope(object, name) } } },
        responses: {
          '2XX': { description: 'Delivered' },
          '410': { description: 'Gone: no more deliveries of this event to the endpoint' },
          default: { description: 'Not delivered: retried on the schedule above' },
        },
      },
    };
  }
  return { webhooks, schemas };
}
