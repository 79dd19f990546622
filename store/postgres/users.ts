/** PostgreSQL user and membership repository. */
import { badRequest } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import { Role } from '../../core/domain/tenancy.js';
import type { UserRepository } from '../repository.js';
import { apiKeyFromRow, membershipFromRow, organizationFromRow, userFromRow } from '../rows.js';
import type { PgDb } from './database.js';

/** Builds the PostgreSQL user repository. */
export function pgUsers(db: PgDb): UserRepository {
  const byId = 'SELECT * FROM users WHERE id = $1';
  const byEmail = 'SELECT * FROM users WHERE email = $1';
  // ON CONFLICT: two first requests of one email race (SQLite's single writer serialized them);
  // the second waits for the first to commit, inserts nothing, and reads the first one's user.
  const insertUser = 'INSERT INTO users (id, email, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (email) DO NOTHING';
  const insertOrg =
    "INSERT INTO organizations (id, name, registerable, deleted, partner_configuration, created_at, updated_at) VALUES ($1, $2, 1, 0, '{}', $3, $4)";
  const insertMember =
    'INSERT INTO memberships (id, user_id, organization_id, role, scopes, created_at, updated_at) VALUES ($1, $2, $3, $4, NULL, $5, $6)';
  const insertKey =
    "INSERT INTO api_keys (id, organization_id, user_id, name, hash, role, dataset_ids, scopes, default_params, expires_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, '[]', '[]', NULL, NULL, $7, $8)";
  const membership = 'SELECT * FROM memberships WHERE user_id = $1 AND organization_id = $2';
  const memberships =
    'SELECT m.* FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = $1 AND o.deleted = 0 ORDER BY m.created_at';
  const organizations =
    'SELECT o.* FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = $1 AND o.deleted = 0 ORDER BY m.created_at';
  const members =
    'SELECT u.*, m.id AS m_id, m.role AS m_role, m.scopes AS m_scopes, m.created_at AS m_created_at, m.updated_at AS m_updated_at FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 ORDER BY m.created_at, u.id';

  return {
    async get(id) {
      const row = await db.get(byId, [id]);
      return row ? userFromRow(row) : undefined;
    },
    async findByEmail(email) {
      const row = await db.get(byEmail, [email]);
      return row ? userFromRow(row) : undefined;
    },
    async createApiOnly({ email, name, organizationName, keyName, keyHash }) {
      return db.tx(async (tx) => {
        const now = Date.now();
        let userRow = await tx.get(byEmail, [email]);
        if (!userRow) {
          await tx.run(insertUser, [newId(), email, name, now, now]);
          userRow = (await tx.get(byEmail, [email]))!;
        }
        const user = userFromRow(userRow);
        const orgId = newId();
        await tx.run(insertOrg, [orgId, organizationName, now, now]);
        await tx.run(insertMember, [newId(), user.id, orgId, Role.Owner, now, now]);
        const keyId = newId();
        await tx.run(insertKey, [keyId, orgId, user.id, keyName, keyHash, Role.Owner, now, now]);
        return {
          user,
          organization: organizationFromRow((await tx.get('SELECT * FROM organizations WHERE id = $1', [orgId]))!),
          key: apiKeyFromRow((await tx.get('SELECT * FROM api_keys WHERE id = $1', [keyId]))!),
        };
      });
    },
    async membership(userId, organizationId) {
      const row = await db.get(membership, [userId, organizationId]);
      return row ? membershipFromRow(row) : undefined;
    },
    async memberships(userId) {
      return (await db.all(memberships, [userId])).map(membershipFromRow);
    },
    async ofOrganization(organizationId) {
      return (await db.all(members, [organizationId])).map((r) => ({
        user: userFromRow(r),
        membership: membershipFromRow({
          id: r.m_id,
          user_id: r.id,
          organization_id: organizationId,
          role: r.m_role,
          scopes: r.m_scopes,
          created_at: r.m_created_at,
          updated_at: r.m_updated_at,
        }),
      }));
    },
    async organizations(userId) {
      return (await db.all(organizations, [userId])).map(organizationFromRow);
    },
    async updateMembership(userId, organizationId, patch) {
      // One transaction with the row locked: a concurrent patch of the other field is not lost.
      return db.tx(async (tx) => {
        const row = await tx.get(`${membership} FOR UPDATE`, [userId, organizationId]);
        if (!row) throw badRequest(`user ${userId} is not a member of organization ${organizationId}`);
        const current = membershipFromRow(row);
        const scopes = patch.scopes === undefined ? current.scopes : patch.scopes;
        await tx.run('UPDATE memberships SET role = $1, scopes = $2, updated_at = $3 WHERE id = $4', [
          patch.role ?? current.role,
          scopes === null ? null : JSON.stringify(scopes),
          Date.now(),
          current.id,
        ]);
        return membershipFromRow((await tx.get(membership, [userId, organizationId]))!);
      });
    },
  };
}
