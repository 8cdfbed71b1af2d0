import { ValidationError } from '@svc/core';
import type { PaymentProvider } from './provider';
import { simulatedProvider } from './simulated';

const PROVIDERS: Record<string, PaymentProvider> = { [simulatedProvider.name]: simulatedProvider };

export function providerNamed(name: string): PaymentProvider {
  const provider = PROVIDERS[name];
  if (!provider) throw ValidationError.field('profile', 'error.validation.not_valid', `No payment provider ${name}`);
  return provider;
}
