export { type Brand, brandOf } from './domain/brand';
export { createPortalLink, LINK_LIFETIME_SECONDS } from './domain/links';
export { LOGIN_LIMITS } from './domain/login';
export { reminderMailId, reminderWrites } from './domain/reminders';
export { DEFAULT_SETTINGS, settingsOf } from './domain/settings';
export { portalRoutes } from './handlers/routes';
export { html, type SafeHtml } from './page/html';
export { type PortalPageInput, pageResult, type RenderedPage, renderPortalPage } from './page/layout';
export { type MessageKey, t } from './page/messages';
export { homePage, type PageContext, signOutForm } from './page/pages';
export { PORTAL_CODE } from './repository/code-repository';
export { linkTokenHash, PORTAL_LINK } from './repository/link-repository';
export { PORTAL_LOGIN_COUNT } from './repository/login-limit-repository';
export { PORTAL_SETTINGS } from './repository/settings-repository';
export { PORTAL_SESSION } from './session/session-repository';
export {
  checkCsrf,
  type PortalSession,
  readPortalSession,
  requirePortalSession,
  SESSION_COOKIE,
  SESSION_IDLE_SECONDS,
  SESSION_MAX_SECONDS,
  type SessionRequest,
  type SessionState,
} from './session/sessions';
