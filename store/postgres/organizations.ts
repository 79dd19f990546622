/** PostgreSQL organization repository. */
import { forbidden, notFound } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import { Role } from '../../core/domain/tenancy.js';
import type { OrganizationRepository } from '../repository.js';
import { monthStart, organizationFromRow, usageFromRow, type UsageRow } from '../rows.js';
import type { PgDb } from './database.js';
import type { Purger } from './purge.js';

/** Builds the PostgreSQL organization repository. */
export function pgOrganizations(db: PgDb, purger: Purger): OrganizationRepository {
  const insert =
    "INSERT INTO organizations (id, name, registerable, deleted, partner_configuration, created_at, updated_at) VALUES ($1, $2, 1, 0, '{}', $3, $4)";
  const insertMember =
    'INSERT INTO memberships (id, user_id, organization_id, role, scopes, created_at, updated_at) VALUES ($1, $2, $3, $4, NULL, $5, $6)';
  const byId = 'SELECT * FROM organizations WHERE id = $1';
  const liveMemberships =
    'SELECT COUNT(*) AS n FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = $1 AND o.deleted = 0';
  const usageRow = `SELECT
       (SELECT COUNT(*) FROM datasets WHERE organization_id = $1 AND deleted = 0) AS datasets,
       (SELECT COUNT(*) FROM memberships WHERE organization_id = $1) AS users,
       (SELECT COUNT(*) FROM chunks c JOIN datasets d ON d.id = c.dataset_id WHERE d.organization_id = $1 AND d.deleted = 0) AS chunks,
       (SELECT COALESCE(SUM(f.size), 0) FROM files f JOIN datasets d ON d.id = f.dataset_id WHERE d.organization_id = $1 AND d.deleted = 0) AS file_bytes,
       (SELECT COALESCE(SUM(r.searches), 0) FROM search_rollup_daily r JOIN datasets d ON d.id = r.dataset_id WHERE d.organization_id = $1 AND d.deleted = 0) AS searches,
       (SELECT COALESCE(SUM(r.records), 0) FROM record_rollup_daily r JOIN datasets d ON d.id = r.dataset_id WHERE d.organization_id = $1 AND d.deleted = 0 AND r.kind = 'rag') AS answers,
       (SELECT COALESCE(SUM(r.records), 0) FROM record_rollup_daily r JOIN datasets d ON d.id = r.dataset_id WHERE d.organization_id = $1 AND d.deleted = 0 AND r.kind = 'rag' AND r.day >= $2) AS answers_this_month,
       (SELECT COALESCE(SUM(r.events), 0) FROM user_event_rollup_daily r JOIN datasets d ON d.id = r.dataset_id WHERE d.organization_id = $1 AND d.deleted = 0) AS events`;

  return {
    async create({ name, ownerUserId, maxPerOwner }) {
      return db.tx(async (tx) => {
        // SQLite's single writer made the count and the insert atomic; here the owner's row is
        // locked first, so two concurrent creations for one owner cannot both pass the cap.
        if (ownerUserId && maxPerOwner != null) {
          await tx.run('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [ownerUserId]);
          const { n } = (await tx.get<{ n: number }>(liveMemberships, [ownerUserId]))!;
          if (n >= maxPerOwner) {
            throw forbidden(`user ${ownerUserId} already belongs to ${n} organizations, the most allowed (QUARRY_MAX_ORGANIZATIONS_PER_USER = ${maxPerOwner})`);
          }
        }
        const id = newId();
        const now = Date.now();
        await tx.run(insert, [id, name, now, now]);
        if (ownerUserId) await tx.run(insertMember, [newId(), ownerUserId, id, Role.Owner, now, now]);
        return organizationFromRow((await tx.get(byId, [id]))!);
      });
    },
    async usage(id) {
      return usageFromRow((await db.get<UsageRow>(usageRow, [id, monthStart(Date.now())]))!);
    },
    async get(id, includeDeleted = false) {
      const row = await db.get(byId, [id]);
      if (!row) return undefined;
      const org = organizationFromRow(row);
      return org.deleted && !includeDeleted ? undefined : org;
    },
    async update(id, patch) {
      // Read and written in one transaction with the row locked: a concurrent update of another
      // field is not overwritten with the value read before it.
      return db.tx(async (tx) => {
        const row = await tx.get(`${byId} FOR UPDATE`, [id]);
        if (!row) throw notFound(`organization ${id} does not exist`);
        const org = organizationFromRow(row);
        const now = Math.max(Date.now(), org.updatedAt);
        await tx.run('UPDATE organizations SET name = $1, partner_configuration = $2, deleted = $3, updated_at = $4 WHERE id = $5', [
          patch.name ?? org.name,
          JSON.stringify(patch.partnerConfiguration ?? org.partnerConfiguration),
          (patch.deleted ?? org.deleted) ? 1 : 0,
          now,
          id,
        ]);
        return organizationFromRow((await tx.get(byId, [id]))!);
      });
    },
    async listDeleted() {
      return (await db.all<{ id: string }>('SELECT id FROM organizations WHERE deleted = 1')).map((r) => r.id);
    },
    async purge(id) {
      return purger.organization(id);
    },
  };
}
