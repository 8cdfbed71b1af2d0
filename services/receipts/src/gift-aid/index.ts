export { GIFT_AID_DECLARATION, GIFT_AID_TEXT } from './declaration-repository';
export { giftAidRoutes } from './routes';
