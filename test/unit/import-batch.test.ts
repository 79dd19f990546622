/**
 * One batch of a file import (workers/jobs/import-batch.ts) against a real SQLite store: rows of
 * the batch that share a tracking id are folded (upsert: the last wins and all count imported;
 * without: the first wins, the rest count skipped), rows stored before are skipped without
 * upsert, and the counts land in the file's progress in the same commit as the chunks, so
 * imported + skipped + errors is the batch's rows; a file no longer processing gets nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FileRecord, ImportCursor } from '../../core/domain/files.js';
import type { Store } from '../../store/repository.js';
import { bareFile } from '../helpers/new-file.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { writeBatch, type PendingRow } from '../../workers/jobs/import-batch.js';

let dir: string;
let store: Store;
let file: FileRecord;
let groupId: string;

const cursor: ImportCursor = { byteOffset: 100, rowIndex: 5, header: null };

/** A row `row` with tracking id `tid` and text `text`, in the file's group. */
const row = (n: number, tid: string, text: string): PendingRow => ({ row: n, input: { trackingId: tid, chunkHtml: text, groupIds: [groupId] } });

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-import-batch-'));
  store = openSqliteStore(dir);
  const org = await store.organizations.create({ name: 'o' });
  const ds = await store.datasets.create({ organizationId: org.id, name: 'd', trackingId: null, serverConfiguration: {} });
  const id = randomUUID();
  await store.files.create(bareFile(ds.id, { id }));
  groupId = (await store.groups.createMany(ds.id, [{ name: 'f', trackingId: 'f' }], false))[0]!.id;
  file = (await store.files.transition(id, ['queued'], 'processing', { groupId }))!;
});

afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const text = async (tid: string): Promise<string | null | undefined> => (await store.chunks.getManyByTrackingIds(file.datasetId, [tid]))[0]?.chunkHtml;

describe('writeBatch', () => {
  it('with upsert, folds repeats to the last row and counts every row imported', async () => {
    const rows = [row(1, 'a', 'a1'), row(2, 'b', 'b2'), row(3, 'a', 'a3'), row(4, 'a', 'a4')];
    const outcome = await writeBatch(store, file, rows, true, { cursor, rowsDone: 5, bytesDone: 100, errors: [{ row: 5, reason: 'bad' }] });
    expect(outcome).toEqual({ imported: 4, skipped: 0, errors: [] });
    expect([await text('a'), await text('b')]).toEqual(['a4', 'b2']);
    const now = (await store.files.getById(file.id))!;
    expect([now.rowsDone, now.rowsImported, now.rowsSkipped, now.errorCount, now.cursor]).toEqual([5, 4, 0, 1, cursor]);
  });

  it('without upsert, keeps the first of repeats and what was stored, counting the rest skipped', async () => {
    await store.chunks.createMany(file.datasetId, [{ trackingId: 'b', chunkHtml: 'stored' }]);
    const rows = [row(1, 'a', 'a1'), row(2, 'b', 'b2'), row(3, 'a', 'a3'), row(4, 'c', 'c4')];
    const outcome = await writeBatch(store, file, rows, false, { cursor, rowsDone: 4, bytesDone: 100, errors: [] });
    expect(outcome).toEqual({ imported: 2, skipped: 2, errors: [] });
    expect([await text('a'), await text('b'), await text('c')]).toEqual(['a1', 'stored', 'c4']);
    const now = (await store.files.getById(file.id))!;
    expect(now.rowsImported + now.rowsSkipped + now.errorCount).toBe(now.rowsDone);
    expect([now.rowsImported, now.rowsSkipped]).toEqual([2, 2]);
  });

  it('writes nothing for a file that is no longer processing', async () => {
    await store.files.transition(file.id, ['processing'], 'failed', { failure: 'stopped' });
    expect(await writeBatch(store, file, [row(1, 'a', 'a1')], true, { cursor, rowsDone: 1, bytesDone: 10, errors: [] })).toBeUndefined();
    expect(await text('a')).toBeUndefined();
    expect((await store.files.getById(file.id))!.rowsDone).toBe(0);
  });
});
