import type { MiddlewareObj } from '@middy/core';
import { issuesToDetails, NotFoundError, ValidationError } from '@svc/core';
import type { StackEvent, StackResult } from '../context';

/** Validates path parameters (failure: 404), query and body (failure: 400 naming the property). */
export function validate(): MiddlewareObj<StackEvent, StackResult> {
  return {
    before: (request) => {
      const { svc } = request.event;
      const { route } = svc;
      if (route.params) {
        const parsed = route.params.safeParse(request.event.pathParameters ?? {});
        if (!parsed.success) throw new NotFoundError();
        svc.params = parsed.data;
      }
      if (route.query) {
        const parsed = route.query.safeParse(request.event.queryStringParameters ?? {}, { reportInput: true });
        if (!parsed.success) {
          throw new ValidationError(
            'Invalid query parameters',
            issuesToDetails(parsed.error.issues, { location: 'query' }),
          );
        }
        svc.query = parsed.data;
      }
      if (route.body) {
        const parsed = route.body.safeParse(svc.parsedBody, { reportInput: true });
        if (!parsed.success) {
          throw new ValidationError('Invalid request body', issuesToDetails(parsed.error.issues));
        }
        svc.body = parsed.data;
      }
    },
  };
}
