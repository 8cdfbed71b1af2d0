import { ConflictError, deferred, ForbiddenError, type Principal, touchesOrganisation, uuidSchema } from '@svc/core';
import { findSupporter } from '@svc/supporters';
import * as z from 'zod';
import { bySupporter, giftsOfOrganisation } from '../domain/gifts';
import { RECEIPT_SETTINGS } from '../repository/receipt-repository';
import type { Declaration } from './declaration';
import { listDeclarationsOf } from './declaration-repository';
import { ClaimSchedule, type ScheduleTotals } from './schedule';
import { isDay, nextDay, ukDayStart, yearsBefore } from './uk-dates';

/**
 * The longest claim period asked for at once. Claims "must be made within four years of the end
 * of the accounting year you received the donation in" (Fund Filer, "Windows for claiming
 * retrospectively", https://fundfiler.freshdesk.com/support/solutions/articles/5000647844-windows-for-claiming-retrospectively,
 * undated; the same in https://help.admin.giveasyoulive.com/hc/en-us/articles/45247471886996-How-long-do-we-have-to-claim-Gift-Aid),
 * so five years reach every donation still claimable. HMRC adds that donations aggregated on one
 * line must be "made within the same accounting period" (Charity Tax Group, April 2019,
 * https://www.charitytaxgroup.org.uk/news-post/2019/aggregated-donations-limit-increases-30/): we
 * do not know an organisation's accounting period, so ask for one period at a time.
 */
export const MAX_CLAIM_YEARS = 5;

const day = (description: string) =>
  z.string().refine(isDay, 'A date written YYYY-MM-DD').meta({ description, example: '2025-04-06' });

export const claimQuery = deferred(() =>
  z
    .object({
      organisation_uuid: uuidSchema.meta({ description: 'The organisation claiming (403 without a grant on it)' }),
      from: day('First UK day of the claim period (donations received from its midnight, Europe/London)'),
      to: day(`Last UK day of the claim period, inclusive; at most ${MAX_CLAIM_YEARS} years after from`),
    })
    .superRefine(({ from, to }, context) => {
      if (!isDay(from) || !isDay(to)) return;
      if (to < from) {
        context.addIssue({ code: 'custom', path: ['to'], message: 'to may not be before from', input: to });
      }
      // `to` must come before the same date MAX_CLAIM_YEARS on.
      if (to >= yearsBefore(from, -MAX_CLAIM_YEARS)) {
        context.addIssue({
          code: 'custom',
          path: ['to'],
          message: `The claim period is at most ${MAX_CLAIM_YEARS} years`,
          input: to,
        });
      }
    }),
);
export type ClaimQuery = z.output<typeof claimQuery>;

/** Declarations of the page's donors read this many at a time (one Query each). */
const DECLARATION_READS_AT_ONCE = 25;

async function declarationsOf(supporterUuids: readonly string[]): Promise<Declaration[][]> {
  const found: Declaration[][] = [];
  for (let i = 0; i < supporterUuids.length; i += DECLARATION_READS_AT_ONCE) {
    const slice = supporterUuids.slice(i, i + DECLARATION_READS_AT_ONCE);
    found.push(...(await Promise.all(slice.map(listDeclarationsOf))));
  }
  return found;
}

export interface ClaimScheduleFile {
  csv: string;
  totals: ScheduleTotals;
}

/**
 * The organisation's Gift Aid schedule for a period of UK days, as CSV. Gifts come a page of
 * whole supporters at a time (giftsOfOrganisation); for each page, the donors' declarations are
 * read (a Query each), then only the donors with one are read (one batched read). Memory holds a
 * page and the lines written so far.
 *
 * An organisation whose receipt settings name another country than GB (the receipts' country,
 * contract section 13) claims no Gift Aid: 409. Without receipt settings the schedule is built:
 * Gift Aid does not need the yearly receipts.
 */
export async function claimScheduleOf(principal: Principal | Promise<Principal>, query: ClaimQuery) {
  const [caller, settings] = await Promise.all([principal, RECEIPT_SETTINGS.find(query.organisation_uuid)]);
  if (!touchesOrganisation(caller, query.organisation_uuid)) {
    throw new ForbiddenError('You have no grant on this organisation');
  }
  if (settings && settings.country !== 'GB') {
    throw new ConflictError(
      `Gift Aid is claimed from HMRC by UK charities; this organisation's receipt settings name ${settings.country}`,
      'error.gift_aid.not_uk',
      'organisation_uuid',
    );
  }
  const from = ukDayStart(query.from) / 1000;
  const to = ukDayStart(nextDay(query.to)) / 1000;
  const schedule = new ClaimSchedule();
  const parts = [schedule.header()];
  for await (const page of giftsOfOrganisation(query.organisation_uuid, from, to)) {
    const donors = bySupporter(page);
    const uuids = donors.map((gifts) => gifts[0]?.supporter_uuid ?? '');
    const declarations = await declarationsOf(uuids);
    // Only donors with a declaration are read: the others' gifts cannot be claimed.
    const supporters = await Promise.all(
      uuids.map((uuid, i) => ((declarations[i] ?? []).length > 0 ? findSupporter(uuid) : undefined)),
    );
    donors.forEach((gifts, i) => {
      parts.push(...schedule.addDonor(supporters[i], gifts, declarations[i] ?? []));
    });
  }
  parts.push(...schedule.finish());
  return { csv: parts.join(''), totals: schedule.totals } satisfies ClaimScheduleFile;
}
