/**
 * Files: a CSV/JSONL import through a presigned upload URL, a document sent as base64, a file's
 * progress and download URL, a dataset's files, and deletion (with its chunks on request).
 * The import itself runs in the job workers (`workers/jobs/file-import.ts`).
 */
import { Readable } from 'node:stream';
import { badRequest, notFound } from '../../core/domain/errors.js';
import { fileBlobKey, fileIdOfBlobKey, type FileKind, type FileRecord, type NewFile, type RowImportOptions } from '../../core/domain/files.js';
import { newId } from '../../core/domain/ids.js';
import { Role } from '../../core/domain/tenancy.js';
import { documentTypeOf, type DocumentType } from '../../core/files/document-text.js';
import { datasetAccess } from '../access.js';
import type { Services } from '../context.js';
import { dropChunksOfFile } from '../files/drop-file.js';
import { fileMetadata, fileWithProgress } from '../present/file.js';
import { deleteChunksFlag } from '../schemas/chunk-group.js';
import { pathPage, pathUuid, queryInt, queryUuid } from '../schemas/common.js';
import { group as presentGroup } from '../present/group.js';
import { parseBase64Document, parseCsvOrJsonl, parseDocumentFields, type DocumentRequest, type FileFields } from '../schemas/file.js';
import { receiveMultipartDocument } from '../files/multipart-document.js';
import type { QuarryRouter } from './router.js';

/** Files per page of `GET /api/dataset/files/{dataset_id}/{page}`, as the reference. */
const FILES_PAGE_SIZE = 10;
/** Most files one page of `GET /api/dataset/scroll_files` may ask for. */
const MAX_SCROLL_FILES = 1000;
/** First look for an upload that has not arrived (S3, which tells nobody): the job then polls with a growing delay. */
const FIRST_UPLOAD_CHECK_MS = 1_000;

/** The import options of a file's rows, from the request (documents use the same tags, link and group). */
function importOptions(fileId: string, f: FileFields, extra?: Partial<RowImportOptions>): RowImportOptions {
  return {
    tagSet: f.tagSet,
    link: f.link,
    timeStamp: f.timeStamp,
    // Every row needs a tracking id to be resumed by; without one given, the file's id names the group.
    groupTrackingId: f.groupTrackingId ?? fileId,
    upsertByTrackingId: true,
    mappings: [],
    fulltextBoostFactor: null,
    semanticBoostFactor: null,
    ...extra,
  };
}

/** The document type of a file name; 400 naming the accepted extensions otherwise. */
function documentType(fileName: string): DocumentType {
  const type = documentTypeOf(fileName);
  if (type === null) {
    throw badRequest(`file_name "${fileName}" must be a document: .txt, .md, .markdown, .html, .htm or .pdf (CSV and JSONL go through POST /api/file/csv_or_jsonl)`);
  }
  return type;
}

/** Registers the file routes, and starts an import as soon as its upload completes on this process. */
export function fileRoutes(router: QuarryRouter, services: Services): void {
  const { store, config, blobs, jobs } = services;

  blobs.onStored((key) => {
    const fileId = fileIdOfBlobKey(key);
    if (!fileId) return;
    // Best effort: the job looks for the upload itself on its own schedule anyway.
    jobs.startFileImport(fileId).catch((err: unknown) => services.logger.warn({ file: fileId, err: (err as Error).message }, 'could not start the import at once'));
  });

  /** Stores the record, then enqueues its job; the record is removed again when the queue refuses it (nothing half made). */
  async function createAndEnqueue(datasetId: string, file: NewFile, delayMs: number): Promise<FileRecord> {
    const record = await store.files.create(file);
    try {
      await jobs.importFile({ fileId: record.id, datasetId }, delayMs);
    } catch (err) {
      await store.files.delete(datasetId, record.id).catch(() => {});
      throw err;
    }
    return record;
  }

  router.post('/api/file/csv_or_jsonl', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const req = parseCsvOrJsonl(ctx.state.body);
    const id = newId();
    const blobKey = fileBlobKey(dataset.id, id);
    const url = await blobs.presignPut(blobKey, { maxBytes: config.fileMaxBytes, ttlSeconds: config.uploadUrlTtlSeconds });
    const record = await createAndEnqueue(
      dataset.id,
      {
        id,
        datasetId: dataset.id,
        fileName: req.fileName,
        kind: req.kind satisfies FileKind,
        status: 'awaiting_upload',
        description: req.description,
        link: req.link,
        metadata: req.metadata,
        tagSet: req.tagSet,
        timeStamp: req.timeStamp,
        size: 0,
        blobKey,
        contentType: req.kind === 'csv' ? 'text/csv' : 'application/x-ndjson',
        importOptions: importOptions(id, req, {
          upsertByTrackingId: req.upsertByTrackingId,
          mappings: req.mappings,
          fulltextBoostFactor: req.fulltextBoostFactor,
          semanticBoostFactor: req.semanticBoostFactor,
        }),
        splitOptions: null,
      },
      FIRST_UPLOAD_CHECK_MS,
    );
    ctx.body = { file_metadata: fileMetadata(record), presigned_put_url: url };
  });

  /** Records a stored document and enqueues its split; its bytes are removed again if that fails. */
  async function recordDocument(datasetId: string, id: string, req: DocumentRequest, size: number): Promise<FileRecord> {
    const blobKey = fileBlobKey(datasetId, id);
    try {
      const type = documentType(req.fileName);
      return await createAndEnqueue(
        datasetId,
        {
          id,
          datasetId,
          fileName: req.fileName,
          kind: 'document',
          status: 'queued',
          description: req.description,
          link: req.link,
          metadata: req.metadata,
          tagSet: req.tagSet,
          timeStamp: req.timeStamp,
          size,
          blobKey,
          contentType: type,
          importOptions: importOptions(id, req),
          splitOptions: req.split,
        },
        0,
      );
    } catch (err) {
      await blobs.delete(blobKey).catch(() => {});
      throw err;
    }
  }

  const splitDefaults = { targetChars: config.documentChunkChars, overlapChars: config.documentOverlapChars };

  router.post('/api/file', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const req = parseBase64Document(ctx.state.body, splitDefaults, config.documentMaxBytes);
    // Checked before the bytes are stored: nothing to undo for a wrong name.
    documentType(req.fileName);
    const id = newId();
    const size = await blobs.write(fileBlobKey(dataset.id, id), Readable.from([req.bytes]), config.documentMaxBytes);
    ctx.body = { file_metadata: fileMetadata(await recordDocument(dataset.id, id, req, size)) };
  });

  // The body is not JSON: body.ts leaves it to this route (MULTIPART_DOCUMENT_ROUTE names it there).
  router.post('/api/file/upload', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const id = newId();
    const received = await receiveMultipartDocument(ctx.req, blobs, fileBlobKey(dataset.id, id), config.documentMaxBytes);
    let req: DocumentRequest;
    try {
      const named = received.fields.file_name === undefined && received.partFileName !== null ? { ...received.fields, file_name: received.partFileName } : received.fields;
      req = parseDocumentFields(named, splitDefaults);
    } catch (err) {
      await blobs.delete(fileBlobKey(dataset.id, id)).catch(() => {});
      throw err;
    }
    ctx.body = { file_metadata: fileMetadata(await recordDocument(dataset.id, id, req, received.size)) };
  });

  router.get('/api/file/:file_id', async (ctx) => {
    const id = pathUuid(ctx.params.file_id, 'file_id');
    const { dataset } = await datasetAccess(ctx, services, Role.Read);
    const file = await store.files.get(dataset.id, id);
    if (!file) throw notFound(`file with id ${id} does not exist in this dataset`);
    const url =
      file.status === 'awaiting_upload'
        ? null
        : await blobs.presignGet(file.blobKey, { ttlSeconds: config.downloadUrlTtlSeconds, fileName: file.fileName, contentType: file.contentType ?? undefined });
    ctx.body = fileWithProgress(file, url);
  });

  router.delete('/api/file/:file_id', async (ctx) => {
    const id = pathUuid(ctx.params.file_id, 'file_id');
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const deleteChunks = deleteChunksFlag(ctx.query.delete_chunks);
    const file = await store.files.get(dataset.id, id);
    if (!file) throw notFound(`file with id ${id} does not exist in this dataset`);
    await dropChunksOfFile(services, file, deleteChunks, ctx.state.log);
    ctx.status = 204;
  });

  router.get('/api/dataset/scroll_files', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Read);
    const cursor = ctx.query.cursor === undefined || ctx.query.cursor === '' ? null : queryUuid(ctx.query.cursor, 'cursor');
    const pageSize = queryInt(ctx.query.page_size, 'page_size', FILES_PAGE_SIZE, MAX_SCROLL_FILES, 1);
    // One more than the page: its id is the next cursor.
    const files = await store.files.scroll(dataset.id, cursor, pageSize + 1);
    const shown = files.slice(0, pageSize);
    const groups = await Promise.all(shown.map((f) => (f.groupId === null ? Promise.resolve(undefined) : store.groups.get(dataset.id, f.groupId))));
    ctx.body = {
      file_with_chunk_groups: shown.map((f, i) => ({ ...fileMetadata(f), chunk_groups: groups[i] === undefined ? null : [presentGroup(groups[i])] })),
      next_cursor: files.length > pageSize ? files[pageSize]!.id : null,
    };
  });

  router.get('/api/dataset/files/:dataset_id/:page', async (ctx) => {
    const datasetId = pathUuid(ctx.params.dataset_id, 'dataset_id');
    const page = pathPage(ctx.params.page);
    const { dataset } = await datasetAccess(ctx, services, Role.Read, datasetId);
    const { files, total } = await store.files.list(dataset.id, page, FILES_PAGE_SIZE);
    ctx.body = {
      file_and_group_ids: files.map((f) => ({ file: fileMetadata(f), group_id: f.groupId })),
      total_pages: Math.ceil(total / FILES_PAGE_SIZE),
    };
  });
}
