/** SQLite API-key repository (hashes only). */
import { newId } from '../../core/domain/ids.js';
import type { ApiKeyRecord } from '../../core/domain/tenancy.js';
import type { ApiKeyRepository } from '../repository.js';
import type { Db } from './database.js';
import { EpochCache, type WriteEpoch } from './epoch-cache.js';
import { apiKeyFromRow, toJson } from '../rows.js';

/** Builds the SQLite API-key repository. */
/** The API-key repository; with `epoch`, `findByHash` answers from memory while nothing was written. */
export function sqliteApiKeys(db: Db, epoch: WriteEpoch | null = null): ApiKeyRepository {
  const cache = epoch ? new EpochCache<ApiKeyRecord>(epoch) : null;
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
      const read = (): ApiKeyRecord | undefined => {
        const row = byHash.get(hash) as Record<string, unknown> | undefined;
        return row ? apiKeyFromRow(row) : undefined;
      };
      return cache ? cache.get(hash, read) : read();
    },
    async list(organizationId) {
      return (list.all(organizationId) as Record<string, unknown>[]).map(apiKeyFromRow);
    },
    async delete(organizationId, id) {
      return remove.run(organizationId, id).changes > 0;
    },
  };
}
