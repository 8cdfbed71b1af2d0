import { findOrganisation } from '@svc/organisations';
import { DEFAULT_SETTINGS, type PortalSettings, settingsOf } from './settings';

/** How an organisation shows to its donors: its portal brand, else its own name. */
export interface Brand {
  name: string;
  /** `#rrggbb`. */
  color: string;
}

/** Where nothing names the organisation (an unknown link): the portal's own look. */
export const NEUTRAL_BRAND = (portalName: string): Brand => ({ name: portalName, color: DEFAULT_SETTINGS.brand.color });

/** The brand of an organisation's portal; undefined for an unknown organisation. */
export async function brandOf(
  organisationUuid: string,
  settings?: PortalSettings,
): Promise<(Brand & { settings: PortalSettings }) | undefined> {
  const [organisation, current] = await Promise.all([
    findOrganisation(organisationUuid),
    settings ? Promise.resolve(settings) : settingsOf(organisationUuid),
  ]);
  if (!organisation) return undefined;
  return { name: current.brand.name ?? organisation.name, color: current.brand.color, settings: current };
}
