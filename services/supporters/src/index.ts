export { type PaymentSupporterInput, paymentSupporterInput } from './domain/input';
export { supporterResponse, supporterShape } from './domain/shapes';
export { type Supporter, supporterSchema } from './domain/supporter';
export { createSupporter, getSupporter, supporterFromPaymentInput } from './domain/supporters';
export { supportersRoutes } from './handlers/routes';
export {
  findSupporter,
  findSupporterByEmail,
  SUPPORTER,
  supporterEmailUnchanged,
  supporterWrite,
  withEmailHash,
} from './repository/supporter-repository';
