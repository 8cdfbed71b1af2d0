import { createDomainHandler } from '@svc/http';
import { authenticator } from '@svc/identity';
import { fingerprintKeySource } from '../providers/card-rules';
import { paymentsRoutes } from './routes';

// Configuration a deployed function must have fails its cold start, not a donor's payment.
fingerprintKeySource();

export const handler = createDomainHandler(paymentsRoutes, authenticator);
