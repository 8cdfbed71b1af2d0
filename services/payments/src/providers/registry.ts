import { ValidationError } from '@svc/core';
import type { PaymentMethod, PaymentProvider, ProviderContext } from './provider';
import { simulatedProvider } from './simulated/simulated-provider';
import { stripeProvider } from './stripe/stripe-provider';

/**
 * The payment providers, by the name a payment method profile gives. A new provider is a folder
 * beside `simulated` and `stripe` implementing PaymentProvider, listed here.
 */
const PROVIDERS: Record<string, PaymentProvider> = {
  [simulatedProvider.name]: simulatedProvider,
  [stripeProvider.name]: stripeProvider,
};

export function providerNamed(name: string): PaymentProvider {
  const provider = PROVIDERS[name];
  if (!provider) throw ValidationError.field('profile', 'error.validation.not_valid', `No payment provider ${name}`);
  return provider;
}

/**
 * The provider behind a profile, once it is known to take this method under this profile: an
 * unknown provider, a method it does not support or a key it lacks is a 400 on `profile` that
 * says which.
 */
export async function providerFor(
  context: ProviderContext,
  method: PaymentMethod,
  saving = false,
): Promise<PaymentProvider> {
  const provider = PROVIDERS[context.profile.provider];
  const refuse = (message: string) => ValidationError.field('profile', 'error.validation.not_valid', message);
  if (!provider) throw refuse(`The profile names ${context.profile.provider}, which is not a payment provider here`);
  if (!provider.methods.includes(method))
    throw refuse(`The ${provider.name} provider does not take ${method} payments`);
  const unusable = await provider.unusableFor?.(context, method, saving);
  if (unusable) throw refuse(unusable);
  return provider;
}
