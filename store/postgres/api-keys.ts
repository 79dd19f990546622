/** PostgreSQL API-key repository (hashes only). */
import { newId } from '../../core/domain/ids.js';
import type { ApiKeyRepository } from '../repository.js';
import { apiKeyFromRow, toJson } from '../rows.js';
import type { PgDb } from './database.js';

/** Builds the PostgreSQL API-key repository. */
export function pgApiKeys(db: PgDb): ApiKeyRepository {
  // RETURNING gives the stored row in the same round trip (SQLite's reads back by id).
  const insert =
    'INSERT INTO api_keys (id, organization_id, user_id, name, hash, role, dataset_ids, scopes, default_params, expires_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *';
  const byHash = 'SELECT k.* FROM api_keys k JOIN organizations o ON o.id = k.organization_id WHERE k.hash = $1 AND o.deleted = 0';
  const list = 'SELECT * FROM api_keys WHERE organization_id = $1 ORDER BY created_at, id';
  return {
    async create(k) {
      const now = Date.now();
      const row = await db.get(insert, [
        newId(),
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
      ]);
      return apiKeyFromRow(row!);
    },
    async findByHash(hash) {
      const row = await db.get(byHash, [hash]);
      return row ? apiKeyFromRow(row) : undefined;
    },
    async list(organizationId) {
      return (await db.all(list, [organizationId])).map(apiKeyFromRow);
    },
    async delete(organizationId, id) {
      return (await db.run('DELETE FROM api_keys WHERE organization_id = $1 AND id = $2', [organizationId, id])) > 0;
    },
  };
}
