/**
 * The embedded default when a dataset has no LLM endpoint: no model to download, the answer is
 * the sentences of the documents that best answer the question, each cited `[n]`, under a first
 * line that says the answer is extractive. Sentences are scored by BM25 over the sentences
 * (quarry's analyzer: stemming, stop words dropped) mixed with the cosine of sentence vectors
 * when an encoder is given, then picked by MMR. Bounded on any input: at most
 * {@link MAX_SENTENCES} sentences of {@link MAX_SENTENCE_CHARS} characters are considered.
 */
import { isStopWord } from '../domain/stop-words.js';
import type { ChatMessage, GenerationOptions, GenerationRequest, RagDoc, TokenUsage } from '../domain/rag.js';
import { createAnalyzer, type Analyzer } from '../../workers/shard/bm25/analyzer.js';
import { abortError, throwIfAborted } from './llm-errors.js';
import type { LlmDeps, LlmProvider } from './provider.js';
import { bm25Scores, cosine, jaccard, pickByMmr, scaleToMax } from './sentence-rank.js';
import { splitSentences } from './sentences.js';
import { firstWords, TOPIC_NAME_WORDS } from './short-tasks.js';
import { suggestPhrases } from './suggest-phrases.js';
import { countTokens } from './token-count.js';

/** First line of every extractive answer: it must never pass for a model's. */
export const EXTRACTIVE_HEADING = 'Extractive answer (no language model configured): the most relevant sentences of the documents.';

/** What the extractive answerer says when no sentence answers the question. */
export const NO_ANSWER = 'None of the documents answers this question.';

/** Sentences considered over all docs, at most (split into per-doc budgets). */
export const MAX_SENTENCES = 2_000;

/** Longest sentence considered, in characters (longer run-ons are cut). */
export const MAX_SENTENCE_CHARS = 600;

/** Distinct question terms scored, at most (the first ones): scoring costs sentences x terms. */
export const MAX_QUESTION_TERMS = 64;

/** Sentences in an answer, at most. */
export const ANSWER_SENTENCES = 4;

/** Weights of the min-max lexical score and of the cosine in a sentence's relevance. */
const LEXICAL_WEIGHT = 0.7;
const DENSE_WEIGHT = 0.3;

/** MMR trade-off between relevance and novelty. */
const MMR_LAMBDA = 0.7;

/** A sentence below this fraction of the best relevance is a filler, not an answer. */
const MIN_RELATIVE_RELEVANCE = 0.25;

/** A sentence this similar to one already picked is a copy, not news. */
const MAX_SIMILARITY = 0.9;

/** Sentences sent to the encoder at most (the best lexical ones): encoding costs ~10 ms a sentence. */
const DENSE_CANDIDATES = 24;

/** Characters of the question given to the encoder, at most (a sentence encoder reads a sentence or two). */
const MAX_ENCODED_QUESTION_CHARS = 2_000;

/** A sentence without a question term still counts with a cosine this high. */
const MIN_DENSE_ONLY_COSINE = 0.5;

/** One candidate sentence. */
interface Candidate {
  readonly doc: RagDoc;
  readonly text: string;
  readonly terms: readonly string[];
}

/** The embedded extractive answerer (see the module comment). */
export class ExtractiveProvider implements LlmProvider {
  private readonly analyzer: Analyzer;
  private readonly encode: LlmDeps['encodeSentences'];

  constructor(deps: LlmDeps) {
    this.analyzer = createAnalyzer({ removeStopWords: true });
    this.encode = deps.encodeSentences;
  }

  async *stream(request: GenerationRequest, signal: AbortSignal): AsyncGenerator<string, TokenUsage, undefined> {
    throwIfAborted(signal);
    const candidates = this.candidates(request.docs);
    const answer = await this.answer(request.question, candidates, signal);
    let prompt = countTokens(request.question);
    for (const c of candidates) prompt += countTokens(c.text);
    let completion = 0;
    for (const delta of answer) {
      throwIfAborted(signal);
      completion += countTokens(delta);
      yield delta;
    }
    return { promptTokens: prompt, completionTokens: completion };
  }

  /** A short completion: the first words of the last user message (what a topic is named after). */
  complete(messages: readonly ChatMessage[], _options: GenerationOptions, signal: AbortSignal): Promise<{ text: string; usage: TokenUsage }> {
    if (signal.aborted) return Promise.reject(abortError(signal));
    const last = [...messages].reverse().find((m) => m.role === 'user');
    const text = firstWords(last?.content ?? '', TOPIC_NAME_WORDS);
    let prompt = 0;
    for (const m of messages) prompt += countTokens(m.content);
    return Promise.resolve({ text, usage: { promptTokens: prompt, completionTokens: countTokens(text) } });
  }

  /** Suggested queries: distinctive phrases of the texts (see suggest-phrases.ts). */
  suggest(texts: readonly string[], query: string | null, signal: AbortSignal): Promise<string[]> {
    if (signal.aborted) return Promise.reject(abortError(signal));
    return Promise.resolve(suggestPhrases(texts, query));
  }

  /** The sentences of the docs, in doc order, each doc within its share of {@link MAX_SENTENCES}. */
  private candidates(docs: readonly RagDoc[]): Candidate[] {
    if (docs.length === 0) return [];
    const perDoc = Math.max(1, Math.floor(MAX_SENTENCES / docs.length));
    const out: Candidate[] = [];
    for (const doc of docs) {
      if (out.length >= MAX_SENTENCES) break;
      const limits = { maxSentences: Math.min(perDoc, MAX_SENTENCES - out.length), maxChars: MAX_SENTENCE_CHARS };
      for (const s of splitSentences(doc.text, limits)) out.push({ doc, text: s.text, terms: this.analyzer.analyze(s.text) });
    }
    return out;
  }

  /**
   * Question terms: analyzed, without the reference's stop words (a question is mostly made of
   * them), the first {@link MAX_QUESTION_TERMS} distinct ones.
   */
  private questionTerms(question: string): string[] {
    const out = new Set<string>();
    for (const t of this.analyzer.unstemmed(question)) {
      if (out.size >= MAX_QUESTION_TERMS) break;
      if (!isStopWord(t)) out.add(this.analyzer.stem(t));
    }
    return [...out];
  }

  /** The answer's deltas: the heading, then each picked sentence with its citation. */
  private async answer(question: string, candidates: readonly Candidate[], signal: AbortSignal): Promise<string[]> {
    const lexical = bm25Scores(this.questionTerms(question), candidates.map((c) => c.terms));
    const dense = await this.denseScores(question, candidates, lexical, signal);
    const lexNorm = scaleToMax(lexical);
    const relevance = new Float64Array(candidates.length);
    for (let i = 0; i < candidates.length; i++) {
      if (dense === null) {
        relevance[i] = lexNorm[i]!;
        continue;
      }
      const cos = dense.cosines[i]!;
      const eligible = lexical[i]! > 0 || cos >= MIN_DENSE_ONLY_COSINE;
      relevance[i] = eligible ? LEXICAL_WEIGHT * lexNorm[i]! + DENSE_WEIGHT * Math.max(0, cos) : 0;
    }
    const termSets = candidates.map((c) => new Set(c.terms));
    const similarity = (i: number, j: number): number => {
      const vi = dense?.vectors.get(i);
      const vj = dense?.vectors.get(j);
      return vi !== undefined && vj !== undefined ? cosine(vi, vj) : jaccard(termSets[i]!, termSets[j]!);
    };
    const picked = pickByMmr(relevance, similarity, { k: ANSWER_SENTENCES, lambda: MMR_LAMBDA, minRelativeRelevance: MIN_RELATIVE_RELEVANCE, maxSimilarity: MAX_SIMILARITY });
    if (picked.length === 0) return [`${EXTRACTIVE_HEADING}\n\n`, NO_ANSWER];
    return [`${EXTRACTIVE_HEADING}\n\n`, ...picked.map((i, k) => `${k === 0 ? '' : ' '}${candidates[i]!.text} [${candidates[i]!.doc.n}]`)];
  }

  /**
   * Cosines of the question with the best lexical candidates (0 for the others) and those
   * candidates' vectors, or null without an encoder. An encoder failure other than the caller's
   * abort falls back to lexical scores: an answer beats an error here.
   */
  private async denseScores(
    question: string,
    candidates: readonly Candidate[],
    lexical: Float64Array,
    signal: AbortSignal,
  ): Promise<{ cosines: Float64Array; vectors: Map<number, Float32Array> } | null> {
    if (this.encode === undefined || candidates.length === 0) return null;
    const order = candidates.map((_, i) => i).sort((a, b) => lexical[b]! - lexical[a]! || a - b);
    const chosen = order.slice(0, DENSE_CANDIDATES);
    let encoded: Float32Array[];
    try {
      encoded = await this.encode([question.slice(0, MAX_ENCODED_QUESTION_CHARS), ...chosen.map((i) => candidates[i]!.text)], signal);
    } catch {
      if (signal.aborted) throw abortError(signal);
      return null;
    }
    throwIfAborted(signal);
    const q = encoded[0];
    if (q === undefined || encoded.length !== chosen.length + 1) return null;
    const cosines = new Float64Array(candidates.length);
    const vectors = new Map<number, Float32Array>();
    chosen.forEach((c, k) => {
      const v = encoded[k + 1]!;
      vectors.set(c, v);
      cosines[c] = cosine(q, v);
    });
    return { cosines, vectors };
  }
}
