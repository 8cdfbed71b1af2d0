export { createPortalLink, LINK_LIFETIME_SECONDS } from './domain/links';
export { DEFAULT_SETTINGS, settingsOf } from './domain/settings';
export { portalRoutes } from './handlers/routes';
export { linkTokenHash, PORTAL_LINK } from './repository/link-repository';
export { PORTAL_SETTINGS } from './repository/settings-repository';
