export { dueAfter, dueOnOrAfter, latestDueBetween } from './due';
export type { CronInterval, Interval, Keyword, KeywordInterval, ParseResult } from './interval';
export { KEYWORDS, parseInterval } from './interval';
export type { LocalDate } from './local-date';
export { addDays, parseLocalDate } from './local-date';
export { dueAtLeastMonthsApart } from './spacing';
export { DEFAULT_ZONE, localDateOf, localMidnight, resolveTimezone } from './zone';
