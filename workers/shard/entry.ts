/**
 * The piscina worker of one shard thread. Each pool has exactly one thread, so the shards in
 * this module's map live in this thread alone; the core routes every task of a shard here.
 */
import { readShardSnapshot, writeShardSnapshot } from './persist/shard-snapshot.js';
import type { Bm25Params, ShardTask } from './protocol.js';
import { Shard } from './shard.js';

const shards = new Map<string, Shard>();

const keyOf = (t: { datasetId: string; shard: number }): string => `${t.datasetId}/${t.shard}`;

function shardFor(t: { datasetId: string; shard: number }, params: Bm25Params = { k1: 0.9, b: 0.4 }): Shard {
  const key = keyOf(t);
  let shard = shards.get(key);
  if (!shard) shards.set(key, (shard = new Shard(params)));
  return shard;
}

/** Runs one task against this thread's shards. */
export default function run(task: ShardTask): unknown {
  switch (task.op) {
    case 'apply':
      shardFor(task, task.bm25).apply(task.upserts, task.deletes, task.seq);
      return shardFor(task).appliedSeq;
    case 'termStats':
      return shardFor(task).termStats(task.text, task.pairs === true, task.prefix === true);
    case 'search':
      return shardFor(task).search(task.text, task.stats, task.k, task.filter, task.minScore, task.countTotal, task.fulltext === true, task.boost ?? null, task.prefix === true);
    case 'searchDense':
      return shardFor(task).searchDense(task.vector, task.k, task.filter, task.threshold, task.countTotal);
    case 'searchSparse':
      return shardFor(task).searchSparse(task.vector, task.k, task.filter, task.threshold, task.countTotal);
    case 'typo':
      return shardFor(task).typoAnswers(task.lookups);
    case 'typoEnable':
      return shardFor(task).enableTypo();
    case 'typoFill':
      shardFor(task).fillTypo(task.docs);
      return null;
    case 'sparseScores':
      return shardFor(task).sparseScores(task.vector, task.chunkIds);
    case 'denseScores':
      return shardFor(task).denseScores(task.vector, task.chunkIds);
    case 'scroll':
      return shardFor(task).scroll(task.filter, task.afterId, task.limit, task.sortField, task.descending);
    case 'stats':
      return shardFor(task).stats();
    case 'analyze':
      return shardFor(task).index.analyzer.analyze(task.text);
    case 'snapshot': {
      const shard = shards.get(keyOf(task));
      if (shard) writeShardSnapshot(task.dir, task.shard, shard);
      return shard?.appliedSeq ?? 0;
    }
    case 'load': {
      const loaded = readShardSnapshot(task.dir, task.shard, task.bm25);
      shards.set(keyOf(task), loaded ?? new Shard(task.bm25));
      return { appliedSeq: loaded?.appliedSeq ?? 0, loaded: loaded !== undefined };
    }
    case 'drop': {
      shards.delete(keyOf(task));
      return null;
    }
    default:
      throw new Error(`unknown shard task ${(task as { op: string }).op}`);
  }
}

