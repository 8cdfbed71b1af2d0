import { ValidationError } from '@svc/core';
import { adyenProvider } from './adyen/adyen-provider';
import type { PaymentProvider } from './provider';
import { simulatedProvider } from './simulated/simulated-provider';
import { stripeProvider } from './stripe/stripe-provider';

/**
 * The payment providers, by the name a payment method profile gives. A new provider is a folder
 * beside `simulated`, `stripe` and `adyen` implementing PaymentProvider, listed here.
 */
const PROVIDERS: Record<string, PaymentProvider> = {
  [simulatedProvider.name]: simulatedProvider,
  [stripeProvider.name]: stripeProvider,
  [adyenProvider.name]: adyenProvider,
};

/** The names of the providers (the operator's status view lists each). */
export const PROVIDER_NAMES = Object.keys(PROVIDERS);

export function providerNamed(name: string): PaymentProvider {
  const provider = PROVIDERS[name];
  if (!provider) throw ValidationError.field('profile', 'error.validation.not_valid', `No payment provider ${name}`);
  return provider;
}
