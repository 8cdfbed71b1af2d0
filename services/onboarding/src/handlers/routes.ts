import { NotFoundError, parseOrThrow, uuidSchema } from '@svc/core';
import { type AnyRoute, defineRoute, uuidParams } from '@svc/http';
import * as z from 'zod';
import { executeConnection, executeOnboarding } from '../domain/execution';
import { disableIntegration, listIntegrations } from '../domain/integrations';
import { createProcess, createProcessInput, readProcess, readProcessByToken } from '../domain/processes';
import { onboardRequestSchema } from '../domain/rules';
import { integrationResponse, integrationShape, processResponse, processShape } from '../domain/shapes';
import { userExists } from '../domain/users';

const tokenParams = z.object({ token: z.string().min(1).max(200) });
const connectBody = z
  .object({ email: z.string().min(1).max(254), password: z.string().min(1).max(200), organisation_uuid: uuidSchema })
  .strict();
const emailSchema = z.email('Not a valid e-mail address').max(254);

export const onboardingRoutes: AnyRoute[] = [
  defineRoute({
    method: 'POST',
    path: '/onboarding/processes',
    auth: 'token',
    operationId: 'createOnboardingProcess',
    summary: 'Partners: start onboarding an organisation (shape A flat, or shape B with initialisation_data)',
    body: createProcessInput,
    responses: {
      201: { description: 'Onboarding Process, with onboarding_url', schema: processResponse },
      403: { description: 'Not a partner, or the configuration is another partner’s' },
      404: { description: 'Unknown onboarding configuration' },
    },
    handle: async ({ body, principal, baseUrl }) => ({
      status: 201,
      body: processShape(await createProcess(principal(), body), baseUrl),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/onboarding/processes/{process_uuid}',
    auth: 'token',
    operationId: 'getOnboardingProcess',
    summary: 'Partners: get one of your onboarding processes',
    params: uuidParams('process_uuid'),
    responses: { 200: { description: 'Onboarding Process', schema: processResponse } },
    handle: async ({ params, principal, baseUrl }) => ({
      status: 200,
      body: processShape(await readProcess(principal(), params.process_uuid), baseUrl),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/onboarding/processes/token/{token}',
    auth: 'none',
    limit: 'address',
    operationId: 'getOnboardingProcessByToken',
    summary: 'Get an onboarding process by its token (the token is the credential)',
    params: tokenParams,
    responses: { 200: { description: 'Onboarding Process', schema: processResponse } },
    handle: async ({ params, baseUrl }) => ({
      status: 200,
      body: processShape(await readProcessByToken(params.token), baseUrl),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/onboarding/processes/token/{token}/onboard',
    auth: 'none',
    limit: 'credentials',
    operationId: 'executeOnboarding',
    summary: 'Create the organisation, its account and user from the process data merged with this body',
    params: tokenParams,
    body: onboardRequestSchema,
    responses: {
      201: { description: 'Onboarding Process, succeeded, with results', schema: processResponse },
      409: { description: 'Expired, already executed, or the e-mail address is taken' },
    },
    handle: async ({ params, body, baseUrl }) => ({
      status: 201,
      body: processShape(await executeOnboarding(params.token, body ?? {}), baseUrl),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/onboarding/processes/token/{token}/connect',
    auth: 'none',
    limit: 'credentials',
    operationId: 'executePartnerConnection',
    summary: 'Connect an existing organisation: the e-mail and password of one of its users',
    params: tokenParams,
    body: connectBody,
    responses: {
      201: { description: 'Onboarding Process, succeeded, with results', schema: processResponse },
      403: { description: 'Wrong credentials, or the user does not belong to the organisation' },
      409: { description: 'Expired, already executed, or already connected' },
    },
    handle: async ({ params, body, baseUrl }) => ({
      status: 201,
      body: processShape(await executeConnection(params.token, body), baseUrl),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/onboarding/users/{email}/existence',
    auth: 'none',
    limit: 'address',
    operationId: 'checkOnboardingUserExistence',
    summary: 'Whether a user with this e-mail address exists (204) or not (404); needs a solved captcha',
    params: z.object({ email: z.string() }),
    query: z.object({ recaptcha_token: z.string().min(1) }),
    responses: {
      204: { description: 'A user with this address exists' },
      403: { description: 'The captcha token was refused' },
      404: { description: 'No user with this address' },
    },
    handle: async ({ params, query }) => {
      const email = parseOrThrow(z.object({ email: emailSchema }), { email: params.email }).email;
      if (!(await userExists(email, query.recaptcha_token)))
        throw new NotFoundError('No user with this e-mail address');
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/partner-integrations',
    auth: 'token',
    operationId: 'listPartnerIntegrations',
    summary: 'List partner integrations (yours as a partner, and those of organisations you have grants on)',
    query: z.object({
      organisation_uuid: uuidSchema.optional(),
      account_uuid: uuidSchema.optional(),
      configuration_uuid: uuidSchema.optional(),
    }),
    responses: { 200: { description: 'Partner Integrations', schema: z.array(integrationResponse) } },
    handle: async ({ query, principal }) => ({
      status: 200,
      body: (await listIntegrations(principal(), query)).map(integrationShape),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/partner-integrations/{partner_integration_uuid}/disable',
    auth: 'token',
    operationId: 'disablePartnerIntegration',
    summary: 'Disconnect: disable the integration; the partner loses its grant at once',
    params: uuidParams('partner_integration_uuid'),
    responses: { 200: { description: 'Partner Integration, disabled', schema: integrationResponse } },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: integrationShape(await disableIntegration(principal(), params.partner_integration_uuid)),
    }),
  }),
];
