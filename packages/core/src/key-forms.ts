/**
 * Keys read from configuration, checked for their form before use: a key in the wrong form must
 * stop the service (or the operator's command), never be used as whatever the parser makes of it.
 */

/**
 * A comma-separated list of hexadecimal keys (several while one is rolled), each of an even length
 * and at least `minBytes` bytes; throws naming `name` otherwise. Node's `Buffer.from(key, 'hex')`
 * stops silently at the first character that is not hex, so a mistyped or base64 key would
 * become a short or empty key, and an HMAC under an empty key is one anyone can compute.
 */
export function hexKeys(value: string | undefined, name: string, minBytes = 16): string[] {
  const keys = (value ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean);
  keys.forEach((key, index) => {
    if (!new RegExp(`^(?:[0-9a-fA-F]{2}){${minBytes},}$`).test(key))
      throw new Error(
        `${name}: key ${index + 1} is not an even-length hexadecimal string of at least ${2 * minBytes} characters: refused`,
      );
  });
  return keys;
}

/**
 * A Stripe secret key of the given mode: `sk_<mode>_…` or, restricted, `rk_<mode>_…`. "Each mode
 * has its own set of API keys" (https://docs.stripe.com/keys); the prefixes name the type and the
 * mode (secret `sk_`, restricted `rk_`; Stripe's security team gives `(sk|rk)_live_` as the form
 * of live keys, https://gitlab.com/gitlab-org/gitlab/-/issues/458019). A key of the other mode
 * would take test payments as live or the reverse.
 */
export function stripeSecretKey(value: string, mode: 'test' | 'live', name: string): string {
  if (!new RegExp(`^(?:sk|rk)_${mode}_\\S+$`).test(value))
    throw new Error(`${name} is not a Stripe ${mode} secret key (sk_${mode}_… or rk_${mode}_…): refused`);
  return value;
}

/** A Stripe webhook endpoint's signing secret: `whsec_…` (https://docs.stripe.com/webhooks#verify-events). */
export function stripeWebhookSecret(value: string, name: string): string {
  if (!/^whsec_\S+$/.test(value)) throw new Error(`${name} is not a Stripe webhook secret (whsec_…): refused`);
  return value;
}
