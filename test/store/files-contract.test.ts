/**
 * Contract of the file repository on both stores: records stored and read back (by dataset and
 * by id alone) with the same row on each store, newest-first pages with their total, transitions
 * as compare and set (the wrong status changes nothing, concurrent ones have one winner), batch
 * progress (counts added, cursor replaced, the first MAX_STORED_ROW_ERRORS errors kept and all
 * counted, nothing committed unless processing, no update lost under concurrency), batches
 * committed with their chunks in one transaction (skips, upserts, a refused row, nothing written
 * unless processing, nothing of a batch whose progress fails), the rows still to come of the
 * imports in progress, deletes, the 404 of an unknown dataset, purges that take a dataset's files
 * along, and the file id of a group created by an import (set on create only). The SQLite writer
 * thread runs the same writes.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import {
  MAX_STORED_ROW_ERRORS,
  type FileBatchRow,
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

  it('scrolls a dataset\'s files by id from a cursor (inclusive), its own only', async () => {
    for (const id of ['f-c', 'f-a', 'f-e', 'f-b', 'f-d']) await store.files.create(csvFile(ds, { id }));
    await store.files.create(csvFile(other, { id: 'f-bb' }));
    const ids = async (from: string | null, limit: number) => (await store.files.scroll(ds, from, limit)).map((f) => f.id);
    expect(await ids(null, 10)).toEqual(['f-a', 'f-b', 'f-c', 'f-d', 'f-e']);
    expect(await ids(null, 2)).toEqual(['f-a', 'f-b']);
    expect(await ids('f-c', 2)).toEqual(['f-c', 'f-d']);
    // A cursor between ids starts at the next one; past the last, nothing.
    expect(await ids('f-bz', 10)).toEqual(['f-c', 'f-d', 'f-e']);
    expect(await ids('f-f', 10)).toEqual([]);
    expect((await store.files.scroll(ds, 'f-d', 1))[0]).toEqual(await store.files.get(ds, 'f-d'));
    expect(await store.files.scroll(randomUUID(), null, 10)).toEqual([]);
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

  it('estimates the rows its imports in progress are still to write, at the rows per byte committed so far', async () => {
    expect(await store.files.rowsToCome(ds)).toBe(0);
    // Processing, but no batch committed: no rate to go by.
    const a = await processing();
    expect(await store.files.rowsToCome(ds)).toBe(0);
    // 10 rows in 1,000 bytes, 3,096 of 4,096 bytes left: 30.96 rows, rounded down.
    await store.files.commitProgress(a.id, batch(10));
    expect(await store.files.rowsToCome(ds)).toBe(30);
    // A second import adds its own (20 rows in 1,000 bytes: 61.92 more), summed before rounding.
    const b = await processing();
    await store.files.commitProgress(b.id, batch(10, { rowsDone: 20 }));
    expect(await store.files.rowsToCome(ds)).toBe(92);
    // Another dataset's import and a file awaiting its upload count nothing here.
    const c = await processing(other);
    await store.files.commitProgress(c.id, batch(10));
    await store.files.create(csvFile(ds));
    expect(await store.files.rowsToCome(other)).toBe(30);
    expect(await store.files.rowsToCome(ds)).toBe(92);
    // Nor does a finished file, or one whose bytes are all read.
    await store.files.transition(b.id, ['processing'], 'done', { rowsTotal: 20 });
    expect(await store.files.rowsToCome(ds)).toBe(30);
    await store.files.commitProgress(a.id, batch(20, { bytesDone: 3096 }));
    expect(await store.files.rowsToCome(ds)).toBe(0);
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

  /** A batch of CSV rows `from..to` (1-based) as the import builds them: tracking ids `rows|<index>`, in the file's group. */
  const rowsOf = (groupId: string, from: number, to: number, text = 'row'): FileBatchRow[] =>
    Array.from({ length: to - from + 1 }, (_, i) => ({
      row: from + i,
      input: { trackingId: `rows|${from + i - 1}`, chunkHtml: `${text} ${from + i}`, tagSet: ['import'], groupIds: [groupId] },
    }));
  /** The progress of a batch of `n` rows ending at row `last`, before the store adds its rows' counts. */
  const progressOf = (last: number, n: number, over: Partial<FileProgress> = {}): FileProgress => ({
    cursor: cursorAt(last),
    rowsDone: n,
    rowsImported: 0,
    rowsSkipped: 0,
    bytesDone: n * 100,
    errors: [],
    ...over,
  });
  /** A processing file with its group, as the import has them before its first batch. */
  const importing = async (): Promise<{ file: FileRecord; groupId: string }> => {
    const f = await processing();
    const [group] = await store.groups.createMany(ds, [{ name: f.fileName, trackingId: 'rows', fileId: f.id }], false);
    return { file: (await store.files.transition(f.id, ['processing'], 'processing', { groupId: group!.id }))!, groupId: group!.id };
  };
  const chunkRows = (datasetId = ds) =>
    queryStore<{ tracking_id: string; chunk_html: string }>(t.loc, 'SELECT tracking_id, chunk_html FROM chunks WHERE dataset_id = ? ORDER BY tracking_id', datasetId);

  it('commits a batch: its chunks (with change-log entries and the group) and the file\'s progress with their counts, together', async () => {
    const { file, groupId } = await importing();
    const head = await store.changeLog.head();
    const outcome = await store.files.commitBatch(file.id, ds, { rows: rowsOf(groupId, 1, 5), upsert: true, progress: progressOf(6, 6, { rowsImported: 1, errors: rowErrors(6, 1) }) });
    expect(outcome).toEqual({ imported: 5, skipped: 0, errors: [] });
    expect((await chunkRows()).map((c) => c.tracking_id)).toEqual(['rows|0', 'rows|1', 'rows|2', 'rows|3', 'rows|4']);
    const stored = (await store.chunks.getManyByTrackingIds(ds, ['rows|0']))[0]!;
    expect(stored.chunkHtml).toBe('row 1');
    expect((await store.groups.chunks(groupId, 1, 10)).total).toBe(5);
    expect((await store.changeLog.since(ds, head, 100)).map((e) => e.op)).toEqual(Array(5).fill('upsert'));
    const after = (await store.files.getById(file.id))!;
    expect(after).toEqual({
      ...file,
      cursor: cursorAt(6),
      rowsDone: 6,
      rowsImported: 6,
      rowsSkipped: 0,
      bytesDone: 600,
      errors: rowErrors(6, 1),
      errorCount: 1,
      updatedAt: after.updatedAt,
    });
  });

  it('skips rows whose tracking id is stored unless upserting, counted in the same commit', async () => {
    const { file, groupId } = await importing();
    expect(await store.files.commitBatch(file.id, ds, { rows: rowsOf(groupId, 1, 3, 'first'), upsert: true, progress: progressOf(3, 3) })).toEqual({ imported: 3, skipped: 0, errors: [] });
    // Rows 2..5 without upsert: 2 and 3 are stored already and stay as they are.
    expect(await store.files.commitBatch(file.id, ds, { rows: rowsOf(groupId, 2, 5, 'second'), upsert: false, progress: progressOf(5, 4, { rowsSkipped: 1 }) })).toEqual({
      imported: 2,
      skipped: 2,
      errors: [],
    });
    expect((await chunkRows()).map((c) => c.chunk_html)).toEqual(['first 1', 'first 2', 'first 3', 'second 4', 'second 5']);
    // With upsert they are replaced.
    expect(await store.files.commitBatch(file.id, ds, { rows: rowsOf(groupId, 1, 2, 'third'), upsert: true, progress: progressOf(7, 2) })).toEqual({ imported: 2, skipped: 0, errors: [] });
    expect((await chunkRows()).map((c) => c.chunk_html)).toEqual(['third 1', 'third 2', 'first 3', 'second 4', 'second 5']);
    const now = (await store.files.getById(file.id))!;
    expect([now.rowsDone, now.rowsImported, now.rowsSkipped, now.cursor]).toEqual([9, 7, 3, cursorAt(7)]);
  });

  it('writes the metadata JSON text an input brings as it is, and serialises the metadata of one without it', async () => {
    const { file, groupId } = await importing();
    const rows = rowsOf(groupId, 1, 2);
    // The text lists the keys in another order than the object: what is read back says which was written.
    rows[0] = { row: 1, input: { ...rows[0]!.input, metadata: { a: 1, b: 'x' }, metadataJson: '{"b":"x","a":1}' } };
    rows[1] = { row: 2, input: { ...rows[1]!.input, metadata: { a: 2, b: 'y' } } };
    expect(await store.files.commitBatch(file.id, ds, { rows, upsert: true, progress: progressOf(2, 2) })).toEqual({ imported: 2, skipped: 0, errors: [] });
    const [first, second] = await store.chunks.getManyByTrackingIds(ds, ['rows|0', 'rows|1']);
    expect(JSON.stringify(first!.metadata)).toBe('{"b":"x","a":1}');
    expect(JSON.stringify(second!.metadata)).toBe('{"a":2,"b":"y"}');
    // An upsert replacing a chunk writes it too.
    rows[0] = { row: 1, input: { ...rows[0].input, metadata: { a: 3 }, metadataJson: '{"a":3}' } };
    expect(await store.files.commitBatch(file.id, ds, { rows: rows.slice(0, 1), upsert: true, progress: progressOf(3, 1) })).toEqual({ imported: 1, skipped: 0, errors: [] });
    expect((await store.chunks.getManyByTrackingIds(ds, ['rows|0']))[0]!.metadata).toEqual({ a: 3 });
  });

  it('without upsert, refuses a tracking id repeated within a batch as a row error and skips the stored ones', async () => {
    const { file, groupId } = await importing();
    expect(await store.files.commitBatch(file.id, ds, { rows: rowsOf(groupId, 1, 1, 'first'), upsert: false, progress: progressOf(1, 1) })).toEqual({ imported: 1, skipped: 0, errors: [] });
    // Rows 2 and 4 share a tracking id (the import folds such repeats before the store; the store holds anyway); row 1's is stored.
    const rows = rowsOf(groupId, 1, 4, 'second');
    rows[3] = { row: 4, input: { ...rows[3]!.input, trackingId: 'rows|1' } };
    const outcome = await store.files.commitBatch(file.id, ds, { rows, upsert: false, progress: progressOf(5, 4) });
    expect(outcome!.imported).toBe(2);
    expect(outcome!.skipped).toBe(1);
    expect(outcome!.errors.map((e) => e.row)).toEqual([4]);
    expect(outcome!.errors[0]!.reason).toMatch(/rows\|1/);
    expect((await chunkRows()).map((c) => `${c.tracking_id} ${c.chunk_html}`)).toEqual(['rows|0 first 1', 'rows|1 second 2', 'rows|2 second 3']);
  });

  it('writes a batch refused for one row\'s sake row by row: that row is a row error, in row order with the others', async () => {
    const { file, groupId } = await importing();
    const rows = rowsOf(groupId, 1, 4);
    // Row 3 names a group that does not exist: the batch is refused whole, then written row by row.
    rows[2] = { row: 3, input: { ...rows[2]!.input, groupIds: [groupId, randomUUID()] } };
    const outcome = await store.files.commitBatch(file.id, ds, { rows, upsert: true, progress: progressOf(5, 5, { errors: [{ row: 5, reason: 'bad lat' }] }) });
    expect(outcome!.imported).toBe(3);
    expect(outcome!.skipped).toBe(0);
    expect(outcome!.errors.map((e) => e.row)).toEqual([3]);
    expect(outcome!.errors[0]!.reason).toMatch(/group/);
    expect((await chunkRows()).map((c) => c.tracking_id)).toEqual(['rows|0', 'rows|1', 'rows|3']);
    const now = (await store.files.getById(file.id))!;
    expect(now.errors.map((e) => e.row)).toEqual([3, 5]);
    expect([now.rowsDone, now.rowsImported, now.errorCount]).toEqual([5, 3, 2]);
    // The rows that went in reached the change log once each (the refused whole batch left none).
    expect(await countRows(t.loc, 'change_log', 'dataset_id = ?', ds)).toBe(3);
  });

  it('writes nothing unless the file is processing in that dataset', async () => {
    const { file, groupId } = await importing();
    const queued = await store.files.create(csvFile(ds, { status: 'queued' }));
    const before = await snapshotStore(t.loc);
    const batch = { rows: rowsOf(groupId, 1, 3), upsert: true, progress: progressOf(3, 3) };
    expect(await store.files.commitBatch(queued.id, ds, batch)).toBeUndefined();
    expect(await store.files.commitBatch(file.id, other, batch)).toBeUndefined();
    expect(await store.files.commitBatch(randomUUID(), ds, batch)).toBeUndefined();
    expect(await snapshotStore(t.loc)).toEqual(before);
    await store.files.delete(ds, file.id);
    expect(await store.files.commitBatch(file.id, ds, batch)).toBeUndefined();
    expect(await countRows(t.loc, 'chunks')).toBe(0);
  });

  it('stores none of a batch\'s chunks when its progress cannot be committed', async () => {
    const { file, groupId } = await importing();
    const before = await snapshotStore(t.loc);
    // The chunks are written, then the progress write throws (a cursor that cannot be stored):
    // the whole transaction is undone, as a worker killed between the two would leave it.
    const broken = { ...cursorAt(3), byteOffset: 300n as unknown as number };
    await expect(store.files.commitBatch(file.id, ds, { rows: rowsOf(groupId, 1, 3), upsert: false, progress: progressOf(3, 3, { cursor: broken }) })).rejects.toThrow();
    expect(await snapshotStore(t.loc)).toEqual(before);
    // Written again, the rows count as imported, not as skipped.
    expect(await store.files.commitBatch(file.id, ds, { rows: rowsOf(groupId, 1, 3), upsert: false, progress: progressOf(3, 3) })).toEqual({ imported: 3, skipped: 0, errors: [] });
    expect((await store.files.getById(file.id))!.rowsSkipped).toBe(0);
  });

  it('loses no count when batches race', async () => {
    const { file, groupId } = await importing();
    const n = 8;
    const outcomes = await Promise.all(
      Array.from({ length: n }, (_, i) => store.files.commitBatch(file.id, ds, { rows: rowsOf(groupId, i * 5 + 1, i * 5 + 5), upsert: false, progress: progressOf(i * 5 + 5, 5) })),
    );
    expect(outcomes).toEqual(Array(n).fill({ imported: 5, skipped: 0, errors: [] }));
    const now = (await store.files.getById(file.id))!;
    expect([now.rowsDone, now.rowsImported, now.rowsSkipped]).toEqual([5 * n, 5 * n, 0]);
    expect(await countRows(t.loc, 'chunks', 'dataset_id = ?', ds)).toBe(5 * n);
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
    const [group] = await store.groups.createMany(ds.id, [{ name: 'g', trackingId: 'rows' }], false);
    const rows = [{ row: 11, input: { trackingId: 'rows|10', chunkHtml: 'eleven', groupIds: [group!.id] } }];
    expect(await store.files.commitBatch(f.id, ds.id, { rows, upsert: false, progress: { ...batch(11), rowsImported: 0, rowsSkipped: 0, errors: [] } })).toEqual({
      imported: 1,
      skipped: 0,
      errors: [],
    });
    expect((await store.chunks.getManyByTrackingIds(ds.id, ['rows|10']))[0]!.chunkHtml).toBe('eleven');
    const committed = (await store.files.getById(f.id))!;
    expect([committed.rowsDone, committed.rowsImported, committed.errorCount, committed.cursor]).toEqual([20, 8, 1, cursorAt(11)]);
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
