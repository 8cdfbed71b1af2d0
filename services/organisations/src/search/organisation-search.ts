import type { Principal } from '@svc/core';
import type { SearchRequest } from '@svc/search';
import { runSqlSearch, type Sql, type SqlSearchSource, storableDocument } from '@svc/search/sql';
import { groupCommit, inSearchEngine, itemsOf, type SearchProjection, searchDb } from '@svc/sql';
import { sql } from 'kysely';
import { organisationShape } from '../domain/shapes';
import { type Organisation, organisationSchema } from '../repository/organisation-repository';

/**
 * Organisations in the search engine (table `organisation_search`): the document as
 * `GET /organisations/{uuid}` returns it to a caller granted the whole organisation, every
 * account listed. A caller granted single accounts of an organisation finds it with only those
 * accounts in `accounts`, filtered at search time from the caller's grants (never the request),
 * so a query can neither match nor see an account it is not granted.
 */
const COLUMNS: SqlSearchSource['columns'] = {
  uuid: { column: 'uuid', kind: 'text' },
  created: { column: 'created', kind: 'number' },
};

/** The organisations as this caller sees them. */
function organisationsFor(caller: Principal): SqlSearchSource {
  const whole = [...new Set(caller.grants.filter((g) => g.account_uuid === undefined).map((g) => g.organisation_uuid))];
  const accounts = caller.grants.flatMap((g) =>
    g.account_uuid !== undefined && !whole.includes(g.organisation_uuid)
      ? [sql`(${g.organisation_uuid}, ${g.account_uuid})`]
      : [],
  );
  const granted: Sql =
    accounts.length === 0 ? sql`FALSE` : sql`(o.organisation_uuid, a.value ->> 'uuid') IN (${sql.join(accounts)})`;
  const wholeOrganisation: Sql = whole.length === 0 ? sql`FALSE` : sql`o.organisation_uuid IN (${sql.join(whole)})`;
  return {
    columns: COLUMNS,
    from: sql`(SELECT o.organisation_uuid, o.uuid, o.created,
        CASE WHEN ${wholeOrganisation} THEN o.document
        ELSE jsonb_set(o.document, '{accounts}', COALESCE(
          (SELECT jsonb_agg(a.value ORDER BY a.position)
             FROM jsonb_array_elements(o.document -> 'accounts') WITH ORDINALITY AS a(value, position)
             WHERE ${granted}),
          '[]'::jsonb)) END AS document
      FROM organisation_search AS o)`,
  };
}

/** Every organisation the grants touch, whole or through an account. */
function organisationScope(caller: Principal): Sql {
  const organisations = [...new Set(caller.grants.map((g) => g.organisation_uuid))];
  return organisations.length === 0 ? sql`FALSE` : sql`t.organisation_uuid IN (${sql.join(organisations)})`;
}

export function searchOrganisationRows(caller: Principal, request: SearchRequest) {
  return inSearchEngine('Organisation search', (db) =>
    runSqlSearch(db, organisationsFor(caller), organisationScope(caller), request),
  );
}

async function upsertStatement(organisations: readonly Organisation[]): Promise<void> {
  const rows = organisations.map(
    (o) => sql`(${o.uuid}, ${o.uuid}, ${o.version ?? 0}, ${String(o.created)}::bigint,
      ${JSON.stringify(storableDocument(organisationShape(o, o.account_uuids)))}::jsonb)`,
  );
  await sql`INSERT INTO organisation_search (organisation_uuid, uuid, version, created, document)
    VALUES ${sql.join(rows)}
    ON CONFLICT (organisation_uuid, uuid) DO UPDATE SET
      version = EXCLUDED.version, created = EXCLUDED.created, document = EXCLUDED.document
    WHERE organisation_search.version < EXCLUDED.version`.execute(searchDb());
}

/** Upserts organisations' rows in group commits; of one organisation's versions the newest lands. */
export const projectOrganisations = groupCommit<Organisation>({
  write: upsertStatement,
  key: (organisation) => organisation.uuid,
  version: (organisation) => organisation.version ?? 0,
});

export const ORGANISATION_PROJECTION: SearchProjection = {
  name: 'organisations',
  entities: ['organisation'],
  tables: ['organisation_search'],
  project: async (items) => {
    const organisations = itemsOf(['organisation'], items).map((item) => organisationSchema.parse(item));
    await projectOrganisations(organisations);
    return organisations.length;
  },
};
