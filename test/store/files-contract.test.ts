/**
 * Contract of the file repository on both stores: records stored and read back (by dataset and
 * by id alone) with the same row on each store, newest-first pages with their total, transitions
 * as compare and set (the wrong status changes nothing, concurrent ones have one winner), batch
 * progress (counts added, cursor replaced, the first MAX_STORED_ROW_ERRORS errors kept and all
 * counted, nothing committed unless processing, no update lost under concurrency), deletes, the
 * 404 of an unknown dataset, purges that take a dataset's files along, and the file id of a group
 * created by an import (set on create only). The SQLite writer thread runs the same writes.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import {
  MAX_STORED_ROW_ERRORS,
  type FileProgress,
  type FileRecord,
  type ImportCursor,
  type NewFile,
  type RowError,
} from '../../core/domain/files.js';
import type { Store } from '../../store/repository.js';
import { openDatabase, type Db } from '../../store/sqlite/database.js';
import { openSqliteStore, sqliteStoreOn } from '../../store/sqlite/sqlite-store.js';
import { withWriteThread } from '../../store/sqlite/threaded-store.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { countRows, queryStore, snapshotStore } from '../helpers/store-snapshot.js';

/** Whether a promise rejected with a QuarryError of this HTTP status. */
const rejectsWith = (status: number) => (e: unknown) => e instanceof QuarryError && e.httpStatus === status;

/** A CSV file awaiting its upload; `over` replaces fields. */
const csvFile = (datasetId: string, over: Partial<NewFile> = {}): NewFile => ({
  id: randomUUID(),
  datasetId,
  fileName: 'rows ü.csv',
  kind: 'csv',
  status: 'awaiting_upload',
  description: 'quarterly rows',
  link: 'https://example.test/rows.csv',
  metadata: { source: 'test', n: [1, 2.5] },
  tagSet: ['b', 'a'],
  timeStamp: 1_700_000_000_000,
  size: 0,
  blobKey: `datasets/${datasetId}/files/x`,
  contentType: null,
  importOptions: {
    tagSet: ['import'],
    link: null,
    timeStamp: null,
    groupTrackingId: 'rows.csv',
    upsertByTrackingId: true,
    mappings: [{ csvJsonlField: 'id', chunkReqPayloadField: 'tracking_id' }],
    fulltextBoostFactor: null,
    semanticBoostFactor: 0.5,
  },
  splitOptions: null,
  ...over,
});

/** A document file (split options, no import options). */
const documentFile = (datasetId: string): NewFile =>
  csvFile(datasetId, {
    fileName: 'paper.md',
    kind: 'document',
    status: 'queued',
    link: null,
    metadata: null,
    tagSet: [],
    timeStamp: null,
    size: 1234,
    contentType: 'text/markdown',
    importOptions: null,
    splitOptions: { targetChars: 1500, overlapChars: 150 },
  });

const cursorAt = (rowIndex: number): ImportCursor => ({ byteOffset: rowIndex * 100, rowIndex, header: ['id', 'text', 'ü'] });
const rowErrors = (from: number, n: number): RowError[] => Array.from({ length: n }, (_, i) => ({ row: from + i, reason: `row ${from + i}: bad lat` }));
const batch = (rowIndex: number, over: Partial<FileProgress> = {}): FileProgress => ({
  cursor: cursorAt(rowIndex),
  rowsDone: 10,
  rowsImported: 7,
  rowsSkipped: 2,
  bytesDone: 1000,
  errors: rowErrors(rowIndex - 9, 1),
  ...over,
});

describe.each(STORE_KINDS)('%s store: files', (kind) => {
  let t: TestStore;
  let store: Store;
  let org: string;
  let ds: string;
  let other: string;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
    org = (await store.organizations.create({ name: 'o' })).id;
    ds = (await store.datasets.create({ organizationId: org, name: 'a', trackingId: null, serverConfiguration: {} })).id;
    other = (await store.datasets.create({ organizationId: org, name: 'b', trackingId: null, serverConfiguration: {} })).id;
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await t.dispose();
  });

  /** A file moved to `processing` (as the import job does). */
  const processing = async (datasetId = ds): Promise<FileRecord> => {
    const f = await store.files.create(csvFile(datasetId, { status: 'queued', size: 4096 }));
    return (await store.files.transition(f.id, ['queued'], 'processing'))!;
  };

  it('creates a file and reads it back by dataset and by id, with the same row on both stores', async () => {
    const before = Date.now();
    const input = csvFile(ds);
    const f = await store.files.create(input);
    expect(f).toEqual({
      ...input,
      groupId: null,
      rowsDone: 0,
      rowsTotal: null,
      rowsImported: 0,
      rowsSkipped: 0,
      bytesDone: 0,
      errors: [],
      errorCount: 0,
      failure: null,
      cursor: null,
      createdAt: f.createdAt,
      updatedAt: f.createdAt,
    });
    expect(f.createdAt).toBeGreaterThanOrEqual(before);
    expect(f.createdAt).toBeLessThanOrEqual(Date.now());
    expect(await store.files.get(ds, f.id)).toEqual(f);
    expect(await store.files.getById(f.id)).toEqual(f);
    const doc = await store.files.create(documentFile(ds));
    expect(await store.files.getById(doc.id)).toEqual(doc);
    expect(doc.importOptions).toBeNull();
    expect(doc.splitOptions).toEqual({ targetChars: 1500, overlapChars: 150 });

    // The row itself, read behind the store's back: JSON as text, epoch ms and counts as integers.
    const [row] = await queryStore(t.loc, 'SELECT * FROM files WHERE id = ?', f.id);
    expect(row).toEqual({
      id: f.id,
      dataset_id: ds,
      file_name: 'rows ü.csv',
      kind: 'csv',
      status: 'awaiting_upload',
      description: 'quarterly rows',
      link: 'https://example.test/rows.csv',
      metadata: JSON.stringify(input.metadata),
      tag_set: '["b","a"]',
      time_stamp: 1_700_000_000_000,
      size: 0,
      blob_key: input.blobKey,
      content_type: null,
      group_id: null,
      import_options: JSON.stringify(input.importOptions),
      split_options: null,
      rows_done: 0,
      rows_total: null,
      rows_imported: 0,
      rows_skipped: 0,
      bytes_done: 0,
      errors: '[]',
      error_count: 0,
      failure: null,
      cursor: null,
      created_at: f.createdAt,
      updated_at: f.createdAt,
    });
  });

  it('answers undefined for another dataset, and for an unknown id', async () => {
    const f = await store.files.create(csvFile(ds));
    expect(await store.files.get(other, f.id)).toBeUndefined();
    expect(await store.files.get(ds, randomUUID())).toBeUndefined();
    expect(await store.files.getById(randomUUID())).toBeUndefined();
  });

  it('refuses a file of an unknown dataset with 404, storing nothing', async () => {
    const missing = randomUUID();
    await expect(store.files.create(csvFile(missing))).rejects.toSatisfy(rejectsWith(404));
    await expect(store.files.create(csvFile(missing))).rejects.toThrow(missing);
    expect(await countRows(t.loc, 'files')).toBe(0);
  });

  it('lists a dataset\'s files newest first, ties by id, one page at a time with the total', async () => {
    // Creation times set through the clock: three files share one millisecond, so the tie order shows.
    const at = [5000, 7000, 7000, 7000, 6000];
    const ids = ['f-c', 'f-a', 'f-e', 'f-b', 'f-d'];
    const clock = vi.spyOn(Date, 'now');
    for (let i = 0; i < ids.length; i++) {
      clock.mockReturnValue(1_700_000_000_000 + at[i]!);
      await store.files.create(csvFile(ds, { id: ids[i]! }));
    }
    clock.mockReturnValue(1_700_000_009_000);
    await store.files.create(csvFile(other, { id: 'g-a' }));
    clock.mockRestore();

    const order = ['f-a', 'f-b', 'f-e', 'f-d', 'f-c'];
    const pages: string[][] = [];
    for (let page = 1; page <= 4; page++) {
      const { files, total } = await store.files.list(ds, page, 2);
      expect(total).toBe(5);
      expect(files.every((f) => f.datasetId === ds)).toBe(true);
      pages.push(files.map((f) => f.id));
    }
    expect(pages).toEqual([order.slice(0, 2), order.slice(2, 4), order.slice(4), []]);
    const all = await store.files.list(ds, 1, 10);
    expect(all.files.map((f) => f.id)).toEqual(order);
    expect(all.files[0]).toEqual(await store.files.get(ds, 'f-a'));
    expect(await store.files.list(randomUUID(), 1, 10)).toEqual({ files: [], total: 0 });
    expect((await store.files.list(other, 1, 10)).files.map((f) => f.id)).toEqual(['g-a']);
  });

  it('transitions only from the given statuses, applying the patch', async () => {
    const f = await store.files.create(csvFile(ds));
    // Not in `from`: nothing changes.
    expect(await store.files.transition(f.id, ['queued', 'processing'], 'done', { size: 9 })).toBeUndefined();
    expect(await store.files.getById(f.id)).toEqual(f);
    expect(await store.files.transition(randomUUID(), ['awaiting_upload'], 'queued')).toBeUndefined();

    const queued = await store.files.transition(f.id, ['awaiting_upload'], 'queued', { size: 4096 });
    expect(queued).toEqual({ ...f, status: 'queued', size: 4096, updatedAt: queued!.updatedAt });
    expect(queued!.updatedAt).toBeGreaterThanOrEqual(f.updatedAt);
    expect(await store.files.get(ds, f.id)).toEqual(queued);

    const group = randomUUID();
    const running = await store.files.transition(f.id, ['queued', 'processing'], 'processing', { groupId: group });
    expect(running).toEqual({ ...queued, status: 'processing', groupId: group, updatedAt: running!.updatedAt });
    const failed = await store.files.transition(f.id, ['processing'], 'failed', { rowsTotal: 120, failure: 'the blob is gone' });
    expect(failed).toEqual({ ...running, status: 'failed', rowsTotal: 120, failure: 'the blob is gone', updatedAt: failed!.updatedAt });
    // An absent field keeps its value; a null failure clears it.
    const again = await store.files.transition(f.id, ['failed'], 'queued', {});
    expect(again).toEqual({ ...failed, status: 'queued', updatedAt: again!.updatedAt });
    const cleared = await store.files.transition(f.id, ['queued'], 'processing', { failure: null });
    expect(cleared).toEqual({ ...again, status: 'processing', failure: null, updatedAt: cleared!.updatedAt });
    expect(await store.files.getById(f.id)).toEqual(cleared);
    expect(cleared!.updatedAt).toBeGreaterThanOrEqual(again!.updatedAt);
  });

  it('lets exactly one of concurrent transitions from the same status win', async () => {
    const f = await store.files.create(csvFile(ds, { status: 'queued' }));
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, i) => store.files.transition(f.id, ['queued'], 'processing', { groupId: `g${i}` })),
    );
    const winners = outcomes.filter((o) => o !== undefined);
    expect(winners).toHaveLength(1);
    expect(await store.files.getById(f.id)).toEqual(winners[0]);
  });

  it('commits batch progress: counts added, cursor replaced, errors appended', async () => {
    const f = await processing();
    expect(await store.files.commitProgress(f.id, batch(10))).toBe(true);
    expect(await store.files.commitProgress(f.id, batch(20, { rowsImported: 8, rowsSkipped: 0, errors: rowErrors(15, 2) }))).toBe(true);
    const after = (await store.files.get(ds, f.id))!;
    expect(after).toEqual({
      ...f,
      cursor: cursorAt(20),
      rowsDone: 20,
      rowsImported: 15,
      rowsSkipped: 2,
      bytesDone: 2000,
      errors: [...rowErrors(1, 1), ...rowErrors(15, 2)],
      errorCount: 3,
      updatedAt: after.updatedAt,
    });
    expect(after.updatedAt).toBeGreaterThanOrEqual(f.updatedAt);
    // A batch without errors keeps the stored ones.
    expect(await store.files.commitProgress(f.id, batch(30, { errors: [] }))).toBe(true);
    const third = (await store.files.getById(f.id))!;
    expect([third.rowsDone, third.errorCount, third.errors.length, third.cursor]).toEqual([30, 3, 3, cursorAt(30)]);
  });

  it(`stores the first ${MAX_STORED_ROW_ERRORS} row errors and counts them all`, async () => {
    const f = await processing();
    const first = rowErrors(1, 600);
    const second = rowErrors(601, 600);
    expect(await store.files.commitProgress(f.id, batch(600, { rowsDone: 600, errors: first }))).toBe(true);
    expect(await store.files.commitProgress(f.id, batch(1200, { rowsDone: 600, errors: second }))).toBe(true);
    let now = (await store.files.getById(f.id))!;
    expect(now.errorCount).toBe(1200);
    expect(now.errors).toEqual([...first, ...second].slice(0, MAX_STORED_ROW_ERRORS));
    expect(await store.files.commitProgress(f.id, batch(1210, { errors: rowErrors(1201, 5) }))).toBe(true);
    now = (await store.files.getById(f.id))!;
    expect(now.errorCount).toBe(1205);
    expect(now.errors).toHaveLength(MAX_STORED_ROW_ERRORS);
    expect(now.errors.at(-1)).toEqual({ row: 1000, reason: 'row 1000: bad lat' });
    expect(now.rowsDone).toBe(1210);
  });

  it('commits progress only while the file is processing', async () => {
    const f = await store.files.create(csvFile(ds, { status: 'queued' }));
    expect(await store.files.commitProgress(f.id, batch(10))).toBe(false);
    expect(await store.files.getById(f.id)).toEqual(f);
    const running = (await store.files.transition(f.id, ['queued'], 'processing'))!;
    const done = (await store.files.transition(f.id, ['processing'], 'done', { rowsTotal: 0 }))!;
    expect(running.status).toBe('processing');
    expect(await store.files.commitProgress(f.id, batch(10))).toBe(false);
    expect(await store.files.getById(f.id)).toEqual(done);
    expect(await store.files.commitProgress(randomUUID(), batch(10))).toBe(false);
    const gone = await processing();
    expect(await store.files.delete(ds, gone.id)).toBe(true);
    expect(await store.files.commitProgress(gone.id, batch(10))).toBe(false);
    expect(await countRows(t.loc, 'files', 'id = ?', gone.id)).toBe(0);
  });

  it('loses no batch when commits race', async () => {
    const f = await processing();
    const n = 12;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => store.files.commitProgress(f.id, batch(10 * (i + 1), { errors: rowErrors(i * 10 + 1, 1) }))),
    );
    expect(results).toEqual(Array(n).fill(true));
    const now = (await store.files.getById(f.id))!;
    expect([now.rowsDone, now.rowsImported, now.rowsSkipped, now.bytesDone, now.errorCount, now.errors.length]).toEqual([
      10 * n,
      7 * n,
      2 * n,
      1000 * n,
      n,
      n,
    ]);
  });

  it('deletes a file of its dataset only', async () => {
    const f = await store.files.create(csvFile(ds));
    const keep = await store.files.create(csvFile(ds));
    expect(await store.files.delete(other, f.id)).toBe(false);
    expect(await store.files.get(ds, f.id)).toEqual(f);
    expect(await store.files.delete(ds, f.id)).toBe(true);
    expect(await store.files.get(ds, f.id)).toBeUndefined();
    expect(await store.files.getById(f.id)).toBeUndefined();
    expect(await store.files.delete(ds, f.id)).toBe(false);
    expect(await store.files.list(ds, 1, 10)).toEqual({ files: [keep], total: 1 });
  });

  it('a dataset purge removes its files, and nothing of another dataset', async () => {
    await store.files.create(csvFile(ds));
    await processing(ds);
    const kept = [await store.files.create(csvFile(other)), await store.files.create(documentFile(other))];
    await store.datasets.markDeleted(ds);
    expect(await store.datasets.purge(ds)).toBe(true);
    expect(await countRows(t.loc, 'files', 'dataset_id = ?', ds)).toBe(0);
    expect(await countRows(t.loc, 'datasets', 'id = ?', ds)).toBe(0);
    expect((await store.files.list(other, 1, 10)).total).toBe(2);
    for (const f of kept) expect(await store.files.get(other, f.id)).toEqual(f);
  });

  it('an organization purge removes the files of all its datasets', async () => {
    const keepOrg = (await store.organizations.create({ name: 'keep' })).id;
    const keep = (await store.datasets.create({ organizationId: keepOrg, name: 'k', trackingId: null, serverConfiguration: {} })).id;
    await store.files.create(csvFile(ds));
    await store.files.create(csvFile(other));
    const kept = await store.files.create(csvFile(keep));
    await store.organizations.update(org, { deleted: true });
    expect(await store.organizations.purge(org)).toBe(true);
    expect(await countRows(t.loc, 'files')).toBe(1);
    expect(await store.files.getById(kept.id)).toEqual(kept);
  });

  it('keeps the file id of a group created with one, and never changes it afterwards', async () => {
    const fileId = randomUUID();
    const [made, plain] = await store.groups.createMany(
      ds,
      [
        { name: 'rows.csv', trackingId: 'rows.csv', fileId },
        { name: 'plain', trackingId: 'plain' },
      ],
      false,
    );
    expect(made!.fileId).toBe(fileId);
    expect(plain!.fileId).toBeNull();
    expect(await store.groups.get(ds, made!.id)).toEqual(made);
    expect((await store.groups.getByTrackingId(ds, 'rows.csv'))!.fileId).toBe(fileId);
    const [row] = await queryStore<{ file_id: string | null }>(t.loc, 'SELECT file_id FROM chunk_groups WHERE id = ?', made!.id);
    expect(row!.file_id).toBe(fileId);
    // Neither an update nor an upsert by tracking id moves it.
    const updated = await store.groups.update(ds, made!.id, { name: 'renamed', fileId: randomUUID() });
    expect(updated.fileId).toBe(fileId);
    const [upserted] = await store.groups.createMany(ds, [{ name: 'again', trackingId: 'rows.csv', fileId: randomUUID() }], true);
    expect(upserted).toEqual({ ...made, name: 'again', updatedAt: upserted!.updatedAt });
    expect(await store.groups.get(ds, made!.id)).toEqual(upserted);
    const [upPlain] = await store.groups.createMany(ds, [{ name: 'plain', trackingId: 'plain', fileId }], true);
    expect(upPlain!.fileId).toBeNull();
  });

  it('changes no row on a refused write', async () => {
    const f = await store.files.create(csvFile(ds, { status: 'queued' }));
    const before = await snapshotStore(t.loc);
    expect(await store.files.transition(f.id, ['processing'], 'done')).toBeUndefined();
    expect(await store.files.commitProgress(f.id, batch(10))).toBe(false);
    expect(await store.files.delete(other, f.id)).toBe(false);
    await expect(store.files.create(csvFile(randomUUID()))).rejects.toSatisfy(rejectsWith(404));
    expect(await snapshotStore(t.loc)).toEqual(before);
  });
});

describe('sqlite store with its writes in a thread: files', () => {
  const dirs: string[] = [];
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it("runs every file write on the writer thread, with the plain store's answers and errors", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-files-threaded-'));
    dirs.push(dir);
    const db: Db = openDatabase(dir);
    store = await withWriteThread(sqliteStoreOn(db, { readCacheBytes: 1 << 20 }), dir);
    const changes = (): number => (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
    const org = await store.organizations.create({ name: 'o' });
    const ds = await store.datasets.create({ organizationId: org.id, name: 'd', trackingId: null, serverConfiguration: {} });
    const before = changes();

    const f = await store.files.create(csvFile(ds.id));
    store.pinReads();
    expect(await store.files.get(ds.id, f.id)).toEqual(f);
    const queued = await store.files.transition(f.id, ['awaiting_upload'], 'queued', { size: 10 });
    expect(await store.files.getById(f.id)).toEqual(queued);
    expect(await store.files.transition(f.id, ['awaiting_upload'], 'queued')).toBeUndefined();
    await store.files.transition(f.id, ['queued'], 'processing');
    expect(await store.files.commitProgress(f.id, batch(10))).toBe(true);
    const committed = (await store.files.getById(f.id))!;
    expect([committed.rowsDone, committed.errorCount, committed.cursor]).toEqual([10, 1, cursorAt(10)]);
    // Errors cross the thread with their status.
    await expect(store.files.create(csvFile(randomUUID()))).rejects.toSatisfy(rejectsWith(404));
    const doomed = await store.files.create(documentFile(ds.id));
    expect(await store.files.delete(ds.id, doomed.id)).toBe(true);
    expect(await store.files.getById(doomed.id)).toBeUndefined();
    // Not one row changed through the caller's own connection.
    expect(changes() - before).toBe(0);
    const plain = openSqliteStore(dir);
    try {
      expect(await plain.files.getById(f.id)).toEqual(committed);
    } finally {
      await plain.close();
    }
  });
});
