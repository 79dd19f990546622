/** Reader for the BEIR SciFact files in shared/data/scifact (never copied into the repository). */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { Qrels } from './metrics.js';

/** Repository root (two levels above this file). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The SciFact folder beside the repository. */
export const scifactDir = path.resolve(repoRoot, '../shared/data/scifact');

/** sha256 of the uncompressed corpus.jsonl as released by BEIR (pinned in the data README). */
export const SCIFACT_CORPUS_SHA256 = 'dec31c8182f3d744c7d2c09423756fd1d17cbef75808db13ba01cc0aab4d1ac6';

/** One corpus document. */
export interface SciFactDoc {
  id: string;
  title: string;
  text: string;
}

/** The whole data set as loaded. */
export interface SciFact {
  docs: SciFactDoc[];
  /** Query id -> query text (all splits). */
  queries: Map<string, string>;
  /** sha256 of the uncompressed corpus, for the report. */
  corpusSha256: string;
}

function jsonLines(file: string): { raw: Buffer; rows: Record<string, unknown>[] } {
  const raw = gunzipSync(readFileSync(file));
  const rows = raw
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { raw, rows };
}

/** Loads corpus and queries; throws when the corpus is not the pinned BEIR release. */
export function loadSciFact(dir: string = scifactDir): SciFact {
  const corpus = jsonLines(path.join(dir, 'corpus.jsonl.gz'));
  const corpusSha256 = createHash('sha256').update(corpus.raw).digest('hex');
  if (corpusSha256 !== SCIFACT_CORPUS_SHA256) {
    throw new Error(`SciFact corpus sha256 ${corpusSha256} differs from the pinned ${SCIFACT_CORPUS_SHA256}`);
  }
  const docs = corpus.rows.map((r) => ({ id: String(r._id), title: String(r.title ?? ''), text: String(r.text ?? '') }));
  const queries = new Map<string, string>();
  for (const r of jsonLines(path.join(dir, 'queries.jsonl.gz')).rows) queries.set(String(r._id), String(r.text ?? ''));
  return { docs, queries, corpusSha256 };
}

/** Loads `qrels/<split>.tsv` (header row; query-id, corpus-id, score; CRLF tolerated). */
export function loadQrels(split: 'test' | 'train' | 'dev', dir: string = scifactDir): Qrels {
  const lines = readFileSync(path.join(dir, 'qrels', `${split}.tsv`), 'utf8').split(/\r?\n/);
  const qrels: Qrels = new Map();
  for (const line of lines.slice(1)) {
    if (line.trim() === '') continue;
    const [q, d, s] = line.split('\t');
    if (q === undefined || d === undefined || s === undefined) throw new Error(`bad qrels line: ${line}`);
    let judged = qrels.get(q);
    if (judged === undefined) qrels.set(q, (judged = new Map()));
    judged.set(d, Number(s));
  }
  return qrels;
}
