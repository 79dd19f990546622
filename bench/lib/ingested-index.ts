/**
 * The index of what bench/http-ingest.ts ingests, as the service holds it, measured in a process
 * of its own (bench/issue11-goals.ts runs it as a child; not a test). The text and tags are
 * shard-synthetic's corpus (same generator, seed and options), but the service's shard documents
 * differ from shard-synthetic's: each chunk is keyed by a store id (`newId`, a v7 UUID) and keeps
 * its tracking id (the corpus id) in the field store, and a dataset of that size is split over
 * `QUARRY_SHARDS_PER_DATASET` shards (the shard threads, by `shardOf`). This builds those shards
 * from the same `toShardDoc` the core uses, a request's 120 chunks at a time, and reports the heap
 * used + array buffers they hold after full GC: the denominator of issue 11's service memory goal.
 *
 *   npx tsx --expose-gc bench/lib/ingested-index.ts [--docs 1000000] [--seed 42] [--batch 120] [--json FILE]
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../core/config.js';
import type { IndexedChunkFields } from '../../core/domain/chunk.js';
import { DATASET_CONFIG_DEFAULTS } from '../../core/domain/dataset-config.js';
import { newId } from '../../core/domain/ids.js';
import { shardOf } from '../../core/router/placement.js';
import { toShardDoc } from '../../core/router/to-shard-doc.js';
import type { ShardDoc } from '../../workers/shard/protocol.js';
import { Shard } from '../../workers/shard/shard.js';
import { writeJsonFigures } from './json-figures.js';
import { canCollect, retainedHeap } from './retained-heap.js';
import { DEFAULT_SYNTHETIC_OPTIONS, syntheticCorpus } from './synthetic.js';

function main(): void {
  const { values } = parseArgs({
    options: {
      docs: { type: 'string', default: String(DEFAULT_SYNTHETIC_OPTIONS.docs) },
      seed: { type: 'string', default: String(DEFAULT_SYNTHETIC_OPTIONS.seed) },
      batch: { type: 'string', default: '120' },
      json: { type: 'string' },
    },
  });
  if (!canCollect) throw new Error('run with --expose-gc: the figure is the heap after full GC');
  const docs = Number(values.docs);
  const seed = Number(values.seed);
  const batchSize = Number(values.batch);
  const shardCount = loadConfig().shardsPerDataset;
  const loadAtStart = os.loadavg();
  const before = retainedHeap();
  const shards = Array.from({ length: shardCount }, () => new Shard({ k1: DATASET_CONFIG_DEFAULTS.BM25_K, b: DATASET_CONFIG_DEFAULTS.BM25_B }));
  let seq = 0;
  let batch: ShardDoc[] = [];
  const flush = (): void => {
    const byShard = shards.map(() => [] as ShardDoc[]);
    for (const d of batch) byShard[shardOf(d.chunkId, shardCount)]!.push(d);
    seq++;
    // As DatasetIndex.applyThrough: every shard gets the batch's sequence, even with nothing of it.
    shards.forEach((s, i) => s.apply(byShard[i]!, [], seq));
    batch = [];
  };
  for (const d of syntheticCorpus({ docs, seed })) {
    // What the store gives back for http-ingest's chunk (chunk_html, tag_set, tracking_id) and the core indexes.
    const stored: IndexedChunkFields = {
      id: newId(),
      trackingId: d.id,
      chunkHtml: d.text,
      link: null,
      metadata: null,
      tagSet: d.tags,
      timeStamp: null,
      location: null,
      numValue: null,
      fulltextContent: null,
      convertHtmlToText: true,
      fulltextBoost: null,
    };
    // Through JSON, as the service's strings come (a request body, a store row): flat. The corpus's
    // ids and newId's are built by concatenation, trees of string pieces ~8x a flat string's size
    // that the field store would keep alive (bench/README.md, "Chunk ids are kept as flat copies").
    batch.push(toShardDoc(JSON.parse(JSON.stringify(stored)) as IndexedChunkFields, []));
    if (batch.length === batchSize) flush();
  }
  if (batch.length > 0) flush();
  const bytes = retainedHeap() - before;
  const chunks = shards.reduce((n, s) => n + s.stats().chunkCount, 0);
  const description = `${docs} synthetic chunks (bench/lib/synthetic.ts, seed ${seed}) as http-ingest sends them, store ids, tracking ids, ${shardCount} shards, applied ${batchSize} at a time`;
  console.log(`ingested-index: ${description}; load average at start ${loadAtStart.map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`ingested-index: ${chunks} chunks, ${(bytes / 2 ** 20).toFixed(1)} MiB (heap used + array buffers after GC), ${(bytes / docs).toFixed(0)} bytes/chunk`);
  writeJsonFigures(values.json, 'ingested-index', { data: description, docs, chunks, shards: shardCount, loadAtStart, measuredBytes: bytes });
}

main();
