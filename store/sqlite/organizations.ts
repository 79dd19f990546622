/** SQLite organization repository. */
import { forbidden, notFound } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import { Role, type OrganizationRecord } from '../../core/domain/tenancy.js';
import type { OrganizationRepository } from '../repository.js';
import type { Db } from './database.js';
import { EpochCache, type WriteEpoch } from './epoch-cache.js';
import type { Purger } from './purge.js';
import { monthStart, organizationFromRow, usageFromRow, type UsageRow } from '../rows.js';

/** Builds the SQLite organization repository. */
/** The organization repository; with `epoch`, `get` answers from memory while nothing was written. */
export function sqliteOrganizations(db: Db, purger: Purger, epoch: WriteEpoch | null = null): OrganizationRepository {
  const insert = db.prepare(
    "INSERT INTO organizations (id, name, registerable, deleted, partner_configuration, created_at, updated_at) VALUES (?, ?, 1, 0, '{}', ?, ?)",
  );
  const insertMember = db.prepare(
    'INSERT INTO memberships (id, user_id, organization_id, role, scopes, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, ?, ?)',
  );
  const byId = db.prepare('SELECT * FROM organizations WHERE id = ?');
  const cache = epoch ? new EpochCache<OrganizationRecord>(epoch) : null;
  const read = (id: string): OrganizationRecord | undefined => {
    const row = byId.get(id) as Record<string, unknown> | undefined;
    return row ? organizationFromRow(row) : undefined;
  };
  const updateRow = db.prepare(
    'UPDATE organizations SET name = ?, partner_configuration = ?, deleted = ?, updated_at = ? WHERE id = ?',
  );
  const deleted = db.prepare('SELECT id FROM organizations WHERE deleted = 1');

  const liveMemberships = db.prepare(
    'SELECT COUNT(*) AS n FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = ? AND o.deleted = 0',
  );
  const usageRow = db.prepare(
    `SELECT
       (SELECT COUNT(*) FROM datasets WHERE organization_id = @id AND deleted = 0) AS datasets,
       (SELECT COUNT(*) FROM memberships WHERE organization_id = @id) AS users,
       (SELECT COUNT(*) FROM chunks c JOIN datasets d ON d.id = c.dataset_id WHERE d.organization_id = @id AND d.deleted = 0) AS chunks,
       (SELECT COALESCE(SUM(f.size), 0) FROM files f JOIN datasets d ON d.id = f.dataset_id WHERE d.organization_id = @id AND d.deleted = 0) AS file_bytes,
       (SELECT COALESCE(SUM(r.searches), 0) FROM search_rollup_daily r JOIN datasets d ON d.id = r.dataset_id WHERE d.organization_id = @id AND d.deleted = 0) AS searches,
       (SELECT COALESCE(SUM(r.records), 0) FROM record_rollup_daily r JOIN datasets d ON d.id = r.dataset_id WHERE d.organization_id = @id AND d.deleted = 0 AND r.kind = 'rag') AS answers,
       (SELECT COALESCE(SUM(r.records), 0) FROM record_rollup_daily r JOIN datasets d ON d.id = r.dataset_id WHERE d.organization_id = @id AND d.deleted = 0 AND r.kind = 'rag' AND r.day >= @month) AS answers_this_month,
       (SELECT COALESCE(SUM(r.events), 0) FROM user_event_rollup_daily r JOIN datasets d ON d.id = r.dataset_id WHERE d.organization_id = @id AND d.deleted = 0) AS events`,
  );

  const create = db.transaction((name: string, ownerUserId: string | null, maxPerOwner: number | null) => {
    // Counted inside the write transaction: two concurrent creations cannot both pass the cap.
    if (ownerUserId && maxPerOwner !== null) {
      const { n } = liveMemberships.get(ownerUserId) as { n: number };
      if (n >= maxPerOwner) {
        throw forbidden(`user ${ownerUserId} already belongs to ${n} organizations, the most allowed (QUARRY_MAX_ORGANIZATIONS_PER_USER = ${maxPerOwner})`);
      }
    }
    const id = newId();
    const now = Date.now();
    insert.run(id, name, now, now);
    if (ownerUserId) insertMember.run(newId(), ownerUserId, id, Role.Owner, now, now);
    return organizationFromRow(byId.get(id) as Record<string, unknown>);
  });

  return {
    async create({ name, ownerUserId, maxPerOwner }) {
      return create.immediate(name, ownerUserId ?? null, maxPerOwner ?? null);
    },
    async usage(id) {
      return usageFromRow(usageRow.get({ id, month: monthStart(Date.now()) }) as UsageRow);
    },
    async get(id, includeDeleted = false) {
      const org = cache ? cache.get(id, () => read(id)) : read(id);
      if (!org) return undefined;
      return org.deleted && !includeDeleted ? undefined : org;
    },
    async update(id, patch) {
      const row = byId.get(id) as Record<string, unknown> | undefined;
      if (!row) throw notFound(`organization ${id} does not exist`);
      const org = organizationFromRow(row);
      const now = Math.max(Date.now(), org.updatedAt);
      updateRow.run(
        patch.name ?? org.name,
        JSON.stringify(patch.partnerConfiguration ?? org.partnerConfiguration),
        (patch.deleted ?? org.deleted) ? 1 : 0,
        now,
        id,
      );
      return organizationFromRow(byId.get(id) as Record<string, unknown>);
    },
    async listDeleted() {
      return (deleted.all() as { id: string }[]).map((r) => r.id);
    },
    async purge(id) {
      return purger.organization(id);
    },
  };
}
