/** SQLite user and membership repository. */
import { badRequest } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import { Role } from '../../core/domain/tenancy.js';
import type { UserRepository } from '../repository.js';
import type { Db } from './database.js';
import { apiKeyFromRow, membershipFromRow, organizationFromRow, userFromRow } from '../rows.js';

/** Builds the SQLite user repository. */
export function sqliteUsers(db: Db): UserRepository {
  const byId = db.prepare('SELECT * FROM users WHERE id = ?');
  const byEmail = db.prepare('SELECT * FROM users WHERE email = ?');
  const insertUser = db.prepare('INSERT INTO users (id, email, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)');
  const insertOrg = db.prepare(
    "INSERT INTO organizations (id, name, registerable, deleted, partner_configuration, created_at, updated_at) VALUES (?, ?, 1, 0, '{}', ?, ?)",
  );
  const insertMember = db.prepare(
    'INSERT INTO memberships (id, user_id, organization_id, role, scopes, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, ?, ?)',
  );
  const insertKey = db.prepare(
    "INSERT INTO api_keys (id, organization_id, user_id, name, hash, role, dataset_ids, scopes, default_params, expires_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, '[]', '[]', NULL, NULL, ?, ?)",
  );
  const orgById = db.prepare('SELECT * FROM organizations WHERE id = ?');
  const keyById = db.prepare('SELECT * FROM api_keys WHERE id = ?');
  const membership = db.prepare('SELECT * FROM memberships WHERE user_id = ? AND organization_id = ?');
  const memberships = db.prepare(
    'SELECT m.* FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = ? AND o.deleted = 0 ORDER BY m.created_at',
  );
  const organizations = db.prepare(
    'SELECT o.* FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = ? AND o.deleted = 0 ORDER BY m.created_at',
  );
  const members = db.prepare(
    'SELECT u.*, m.id AS m_id, m.role AS m_role, m.scopes AS m_scopes, m.created_at AS m_created_at, m.updated_at AS m_updated_at FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = ? ORDER BY m.created_at, u.id',
  );
  const updateMember = db.prepare('UPDATE memberships SET role = ?, scopes = ?, updated_at = ? WHERE id = ?');

  const createApiOnly = db.transaction(
    (email: string, name: string, organizationName: string, keyName: string, keyHash: string) => {
      const now = Date.now();
      let userRow = byEmail.get(email) as Record<string, unknown> | undefined;
      if (!userRow) {
        insertUser.run(newId(), email, name, now, now);
        userRow = byEmail.get(email) as Record<string, unknown>;
      }
      const user = userFromRow(userRow);
      const orgId = newId();
      insertOrg.run(orgId, organizationName, now, now);
      insertMember.run(newId(), user.id, orgId, Role.Owner, now, now);
      const keyId = newId();
      insertKey.run(keyId, orgId, user.id, keyName, keyHash, Role.Owner, now, now);
      return {
        user,
        organization: organizationFromRow(orgById.get(orgId) as Record<string, unknown>),
        key: apiKeyFromRow(keyById.get(keyId) as Record<string, unknown>),
      };
    },
  );

  return {
    async get(id) {
      const row = byId.get(id) as Record<string, unknown> | undefined;
      return row ? userFromRow(row) : undefined;
    },
    async findByEmail(email) {
      const row = byEmail.get(email) as Record<string, unknown> | undefined;
      return row ? userFromRow(row) : undefined;
    },
    async createApiOnly({ email, name, organizationName, keyName, keyHash }) {
      return createApiOnly.immediate(email, name, organizationName, keyName, keyHash);
    },
    async membership(userId, organizationId) {
      const row = membership.get(userId, organizationId) as Record<string, unknown> | undefined;
      return row ? membershipFromRow(row) : undefined;
    },
    async memberships(userId) {
      return (memberships.all(userId) as Record<string, unknown>[]).map(membershipFromRow);
    },
    async ofOrganization(organizationId) {
      return (members.all(organizationId) as Record<string, unknown>[]).map((r) => ({
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
      return (organizations.all(userId) as Record<string, unknown>[]).map(organizationFromRow);
    },
    async updateMembership(userId, organizationId, patch) {
      const row = membership.get(userId, organizationId) as Record<string, unknown> | undefined;
      if (!row) throw badRequest(`user ${userId} is not a member of organization ${organizationId}`);
      const current = membershipFromRow(row);
      const scopes = patch.scopes === undefined ? current.scopes : patch.scopes;
      updateMember.run(patch.role ?? current.role, scopes === null ? null : JSON.stringify(scopes), Date.now(), current.id);
      return membershipFromRow(membership.get(userId, organizationId) as Record<string, unknown>);
    },
  };
}
