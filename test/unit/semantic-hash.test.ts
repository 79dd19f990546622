/**
 * The semantic hash is stored beside every chunk and compared with the hash a vector was made
 * from: a digest that changed would mark every stored vector outdated and re-embed every dataset.
 * Pinned here by literal SHA-1 digests, and checked against the Hash-object reference on random
 * chunks (the function takes a one-shot path without a boost).
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { semanticHash, semanticText } from '../../core/domain/semantic-text.js';

const chunk = (over: Partial<Parameters<typeof semanticHash>[0]> = {}): Parameters<typeof semanticHash>[0] => ({
  semanticContent: null,
  chunkHtml: '<p>Hello <b>world</b></p>',
  convertHtmlToText: true,
  semanticBoost: null,
  ...over,
});

describe('semanticHash', () => {
  it('keeps the digests it has always stored', () => {
    // SHA-1 of "Hello world" (the chunk's HTML as text), of it with a boost, and of the empty text.
    expect(semanticHash(chunk())).toBe('7b502c3a1f48c8609ae212cdfb639dee39673f5e');
    expect(semanticHash(chunk({ semanticBoost: { phrase: 'red shoes', distance_factor: 0.5 } }))).toBe('1892a51305abe682a77b15ec35e44dd691b777e5');
    expect(semanticHash(chunk({ chunkHtml: null }))).toBe('da39a3ee5e6b4b0d3255bfef95601890afd80709');
    expect(semanticHash(chunk({ semanticContent: 'Hello world', chunkHtml: '<p>other</p>' }))).toBe('7b502c3a1f48c8609ae212cdfb639dee39673f5e');
  });

  it('equals the SHA-1 of the semantic text and the boost, on any chunk', () => {
    const boostArb = fc.option(fc.record({ phrase: fc.string(), distance_factor: fc.double({ min: 0, max: 1, noNaN: true }) }), { nil: null });
    fc.assert(
      fc.property(fc.option(fc.string({ unit: 'grapheme' }), { nil: null }), fc.option(fc.string({ unit: 'grapheme' }), { nil: null }), fc.boolean(), boostArb, (semanticContent, chunkHtml, convertHtmlToText, semanticBoost) => {
        const c = chunk({ semanticContent, chunkHtml, convertHtmlToText, semanticBoost });
        const h = createHash('sha1').update(semanticText(c));
        if (semanticBoost) h.update(`\u0000${semanticBoost.phrase}\u0000${semanticBoost.distance_factor}`);
        expect(semanticHash(c)).toBe(h.digest('hex'));
      }),
      { numRuns: 500 },
    );
  });
});
