import { deferred } from '@svc/core';
import * as z from 'zod';

/** What a declaration covers (contract section 13): one donation, the future, or also the past 4 years. */
export const DECLARATION_SCOPES = ['single', 'future', 'past_and_future'] as const;
export type DeclarationScope = (typeof DECLARATION_SCOPES)[number];

/** How the donor made it. An oral one may be cancelled retrospectively within 30 days (coverage.ts). */
export const DECLARATION_CHANNELS = ['online', 'written', 'oral'] as const;
export type DeclarationChannel = (typeof DECLARATION_CHANNELS)[number];

/** The wording's version: what the charity calls the text the donor saw or heard. */
export const TEXT_VERSION_MAX = 64;
/** The wording itself, when sent: an HMRC model declaration is well under 2,000 characters. */
export const TEXT_MAX = 10_000;

/**
 * A Gift Aid declaration as stored and answered. Times are Unix seconds, as everywhere in the
 * API. `text_hash` is the SHA-256 (hex) of the wording the donor agreed to, kept once per
 * organisation and version (declaration-repository.ts); absent when the wording was never sent.
 * A cancelled declaration stays, with the time it was cancelled.
 */
export const declarationSchema = z.object({
  uuid: z.string(),
  supporter_uuid: z.string(),
  organisation_uuid: z.string(),
  scope: z.enum(DECLARATION_SCOPES),
  text_version: z.string(),
  text_hash: z.string().optional(),
  declared_at: z.number().int(),
  channel: z.enum(DECLARATION_CHANNELS),
  created: z.number().int(),
  cancelled_at: z.number().int().optional(),
});
export type Declaration = z.infer<typeof declarationSchema>;

export const declarationResponse = deferred(() =>
  declarationSchema.extend({
    scope: z.enum(DECLARATION_SCOPES).meta({
      description:
        'single: the one donation made with it (the donation that day nearest in time to declared_at); ' +
        'future: donations from the day of declared_at on; past_and_future: also the 4 years before',
    }),
    text_hash: z.string().optional().meta({
      description: 'SHA-256 (hex) of the declaration wording, kept once per organisation and text_version',
    }),
    declared_at: z.number().int().meta({ description: 'Unix seconds: when the donor declared' }),
    created: z.number().int().meta({ description: 'Unix seconds: when it was recorded here' }),
    cancelled_at: z.number().int().optional().meta({
      description: 'Unix seconds: when it was cancelled; donations from that UK day on are not covered',
    }),
  }),
);

/** The request body of a new declaration. */
export const createDeclarationInput = deferred(() =>
  z
    .object({
      scope: z.enum(DECLARATION_SCOPES),
      text_version: z
        .string()
        .min(1)
        .max(TEXT_VERSION_MAX)
        .regex(/^[\p{L}\p{N}][\p{L}\p{N} ._\-/()]*$/u, 'Letters, digits, spaces and . _ - / ( )')
        .meta({ description: 'The version of the declaration wording the donor agreed to' }),
      text: z
        .string()
        .min(1)
        .max(TEXT_MAX)
        .optional()
        .meta({
          description:
            'The wording itself: kept once per organisation and text_version, its SHA-256 answered as text_hash. ' +
            'A version already kept with other wording is a 409.',
        }),
      declared_at: z
        .number()
        .int()
        .min(0)
        .meta({ description: 'Unix seconds: when the donor declared (not in the future)' }),
      channel: z.enum(DECLARATION_CHANNELS),
    })
    .strict(),
);
export type CreateDeclarationInput = z.output<typeof createDeclarationInput>;
