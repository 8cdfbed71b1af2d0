import { keyedHash, TooManyRequestsError } from '@svc/core';
import { defineEntity, TTL_ATTRIBUTE, transactWrite } from '@svc/table';
import * as z from 'zod';

/** What a login limit counts by: the e-mail asked for, or the caller's address (an IPv6 /64). */
export type LoginLimitScope = 'email' | 'address';

interface LoginCount {
  scope: LoginLimitScope;
  /** The keyed hash of the e-mail or address key: neither is kept in a key. */
  subject_hash: string;
  /** The window's number: Unix seconds over the window's length (clock-aligned windows). */
  window: number;
  count: number;
}

/**
 * Login requests (`POST /portal/login`) of one e-mail or one address in one clock-aligned window,
 * counted before the request does anything (one conditional UpdateItem each). Only counted, never
 * read; gone by TTL one window after its end.
 */
export const PORTAL_LOGIN_COUNT = defineEntity<LoginCount, readonly [LoginLimitScope, string, number]>({
  name: 'portal_login_count',
  summary:
    'Donor portal login requests of one e-mail (15-minute windows) or one address (1-minute windows), counted before each request is served (TTL after the window).',
  prefix: 'PORTAL_LOGIN',
  idShown: '<email or address>#<keyed hash>#<window>',
  sort: 'PORTAL_LOGIN',
  id: (count) => [count.scope, count.subject_hash, count.window] as const,
  idParts: ([scope, hash, window]) => [scope, hash, window],
  byKey: 'the login requests of an e-mail or address in a window (the login limits)',
  storage: {
    toAttributes: ({ count }) => ({ count }),
    fromAttributes: (item) => {
      const [, scope, hash, window] = String(item.pk).split('#');
      return { scope, subject_hash: hash, window: Number(window), count: item.count };
    },
  },
  parse: (value) =>
    z
      .object({
        scope: z.enum(['email', 'address']),
        subject_hash: z.string(),
        window: z.number().int(),
        count: z.number().int(),
      })
      .parse(value),
});

export interface LoginLimit {
  /** Requests admitted per window. */
  max: number;
  windowSeconds: number;
}

/**
 * Counts one request of `subject` in the current window, only while the window has fewer than
 * `max` (the condition and the ADD are one write, so requests sent at once cannot pass the
 * bound); past it, 429 with the seconds to the window's end.
 */
export async function countLoginRequest(
  scope: LoginLimitScope,
  subject: string,
  limit: LoginLimit,
  at: number,
): Promise<void> {
  const window = Math.floor(at / limit.windowSeconds);
  const windowEnd = (window + 1) * limit.windowSeconds;
  const hash = await keyedHash(`portal_login_${scope}`, subject);
  await transactWrite([
    {
      item: {
        Update: {
          Key: PORTAL_LOGIN_COUNT.key([scope, hash, window]),
          UpdateExpression: 'ADD #count :one SET #entity = :entity, #ttl = if_not_exists(#ttl, :ttl)',
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :max',
          ExpressionAttributeNames: { '#count': 'count', '#entity': 'entity', '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: {
            ':one': 1,
            ':max': limit.max,
            ':entity': 'portal_login_count',
            ':ttl': windowEnd + limit.windowSeconds,
          },
        },
      },
      onConditionFailed: () =>
        new TooManyRequestsError(
          scope === 'email'
            ? 'Too many login requests for this e-mail address; try again later'
            : 'Too many login requests from this address; try again later',
          Math.max(1, windowEnd - at),
        ),
    },
  ]);
}
