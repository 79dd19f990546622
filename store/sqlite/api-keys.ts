/** SQLite API-key repository (hashes only). */
import { newId } from '../../core/domain/ids.js';
import type { ApiKeyRepository } from '../repository.js';
import type { Db } from './database.js';
import { apiKeyFromRow, toJson } from './rows.js';

/** Builds the SQLite API-key repository. */
export function sqliteApiKeys(db: Db): ApiKeyRepository {
  const insert = db.prepare(
    'INSERT INTO api_keys (id, organization_id, user_id, name, hash, role, dataset_ids, scopes, default_params, expires_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const byId = db.prepare('SELECT * FROM api_keys WHERE id = ?');
  const byHash = db.prepare('SELECT k.* FROM api_keys k JOIN organizations o ON o.id = k.organization_id WHERE k.hash = ? AND o.deleted = 0');
  const list = db.prepare('SELECT * FROM api_keys WHERE organization_id = ? ORDER BY created_at, id');
  const remove = db.prepare('DELETE FROM api_keys WHERE organization_id = ? AND id = ?');
  return {
    async create(k) {
      const id = newId();
      const now = Date.now();
      insert.run(
        id,
        k.organizationId,
        k.userId,
        k.name,
        k.hash,
        k.role,
        JSON.stringify(k.datasetIds),
        JSON.stringify(k.scopes),
        toJson(k.defaultParams),
        k.expiresAt,
        now,
        now,
      );
      return apiKeyFromRow(byId.get(id) as Record<string, unknown>);
    },
    async findByHash(hash) {
      const row = byHash.get(hash) as Record<string, unknown> | undefined;
      return row ? apiKeyFromRow(row) : undefined;
    },
    async list(organizationId) {
      return (list.all(organizationId) as Record<string, unknown>[]).map(apiKeyFromRow);
    },
    async delete(organizationId, id) {
      return remove.run(organizationId, id).changes > 0;
    },
  };
}
