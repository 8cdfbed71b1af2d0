/**
 * How often, at most, one container reads the providers' secret again after a refused callback
 * (a Stripe event or an Adyen notification that no cached key verifies), in seconds of service
 * time. The keys are otherwise read once per container, so without it a key rolled at the provider
 * (and put in the secret with `pnpm ops stripe:configure`) would be refused until every container
 * was replaced.
 *
 * 60 s because:
 * - it is shorter than the providers' own retry: Adyen retries a batch not accepted 3 times within
 *   about 30 s, then after 2 minutes, 5, 10, ... for 30 days ("Retry queue",
 *   https://docs.adyen.com/development-resources/webhooks/troubleshoot); Stripe retries for up to
 *   three days with exponential back-off (its schedule is not documented to the second: unknowable
 *   here). So a delivery refused while the secret held the old key is accepted on the retry after
 *   the roll, by the same container;
 * - a flood of bad signatures (someone knocking) costs each container at most one GetSecretValue a
 *   minute: far under Secrets Manager's 10,000 GetSecretValue requests per second per Region
 *   ("AWS Secrets Manager quotas", https://docs.aws.amazon.com/secretsmanager/latest/userguide/reference_limits.html),
 *   and at $0.05 per 10,000 calls about 2 cents a month per container flooded non-stop.
 */
export const KEY_REREAD_SECONDS = 60;
