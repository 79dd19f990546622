/** A minimal file record to store directly (no upload, no options), for tests that need one in a given state. */
import { randomUUID } from 'node:crypto';
import type { NewFile } from '../../core/domain/files.js';

/** A queued JSONL file of `datasetId` with no options; `over` replaces fields. */
export function bareFile(datasetId: string, over: Partial<NewFile> = {}): NewFile {
  const id = over.id ?? randomUUID();
  return {
    id,
    datasetId,
    fileName: 'f.jsonl',
    kind: 'jsonl',
    status: 'queued',
    description: '',
    link: null,
    metadata: null,
    tagSet: [],
    timeStamp: null,
    size: 100,
    blobKey: `datasets/${datasetId}/files/${id}`,
    contentType: null,
    importOptions: null,
    splitOptions: null,
    ...over,
  };
}
