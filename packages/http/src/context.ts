import type { MiddyfiedHandler } from '@middy/core';
import type { Principal } from '@svc/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { AnyRoute } from './route';

/** What the stack's middlewares learn about a request, in the order they learn it. */
export interface RequestState {
  route: AnyRoute;
  requestId: string;
  rawBody: string;
  /** The caller's address (client-address.ts), set before anything else reads the request. */
  sourceIp: string;
  parsedBody: unknown;
  clientId?: string;
  principal?: Promise<Principal>;
  params?: unknown;
  query?: unknown;
  body?: unknown;
}

export type StackEvent = APIGatewayProxyEventV2 & { svc: RequestState };
export type StackResult = APIGatewayProxyStructuredResultV2;
export type StackHandler = MiddyfiedHandler<StackEvent, StackResult, Error, Context>;
