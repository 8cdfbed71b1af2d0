/**
 * Zones with awkward rules for tests: 30-minute DST (Lord Howe), DST at midnight (Santiago,
 * Havana, São Paulo), a skipped day (Apia), quarter-hour offsets (Kathmandu, Chatham).
 */
export const AWKWARD_ZONES = [
  'UTC',
  'Europe/Zurich',
  'America/New_York',
  'Australia/Lord_Howe',
  'Pacific/Apia',
  'America/Santiago',
  'Asia/Kathmandu',
  'Pacific/Chatham',
  'America/Havana',
  'America/Sao_Paulo',
] as const;
