/** The dataset event types a filter selects (core/domain/dataset-events.ts): quarry's names, the reference's, and neither. */
import { describe, expect, it } from 'vitest';
import { DATASET_EVENT_TYPES, REFERENCE_EVENT_TYPES, storedEventTypes } from '../../core/domain/dataset-events.js';

describe('storedEventTypes', () => {
  it('keeps quarry\'s types, maps the reference\'s, drops those quarry never records, and names the rest', () => {
    expect(storedEventTypes(['chunks_embedded', 'file_import_failed'])).toEqual({ types: ['chunks_embedded', 'file_import_failed'], unknown: [] });
    expect(storedEventTypes(['csv_jsonl_processing_completed', 'file_uploaded', 'file_import_finished'])).toEqual({ types: ['file_import_finished'], unknown: [] });
    expect(storedEventTypes(['bulk_chunks_deleted', 'crawl_started'])).toEqual({ types: ['chunks_bulk_deleted'], unknown: [] });
    expect(storedEventTypes(['crawl_started', 'etl_failed'])).toEqual({ types: [], unknown: [] });
    expect(storedEventTypes(['chunks_embeded', 'toString', 'constructor'])).toEqual({ types: [], unknown: ['chunks_embeded', 'toString', 'constructor'] });
  });

  it('maps every reference type to one quarry records, or to none', () => {
    for (const ours of Object.values(REFERENCE_EVENT_TYPES)) if (ours !== null) expect(DATASET_EVENT_TYPES).toContain(ours);
    // The reference's list and quarry's share no name: a name means one thing.
    for (const name of Object.keys(REFERENCE_EVENT_TYPES)) expect(DATASET_EVENT_TYPES as readonly string[]).not.toContain(name);
  });
});
