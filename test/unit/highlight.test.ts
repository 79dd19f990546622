import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import {
  DEFAULT_HIGHLIGHT_OPTIONS,
  highlightChunk,
  resolveHighlightOptions,
  type HighlightOptions,
} from '../../facade/highlight/index.js';
import { JaroWinklerAtLeast, jaroWinkler } from '../../facade/highlight/jaro-winkler.js';

/** Fixed chunk_html corpus of the golden cases. */
const CORPUS = {
  plain: 'Malaria is a deadly disease. There is no cure for malaria yet, but a MALARIA vaccine and a cure are in trials!',
  nested:
    '<div class="doc"><h2>Quick Start</h2><p>The <b>quick</b> brown fox jumps over the <i>lazy <u>dog</u></i>.</p><p>Quick foxes are quicker than dogs.</p></div>',
  entities: '<p>Fish &amp; chips &mdash; Tom&#39;s favourite &lt;b&gt;meal&lt;/b&gt;, served with salt &amp; vinegar.</p>',
  spanning:
    '<p>Use the <a href="https://example.com/?q=search+engine&amp;x=1" title="search engine">search</a> engine to search the engine room.</p>',
  repeated: 'Cat cat CAT. The cat sat on the mat; concatenate the CATalog of cats.',
  hidden: '<style>.cat { color: red }</style><p>Cats &amp; dogs<br>cats and dogs</p><script>var cat = "cat";</script>',
  aspirin:
    'Aspirin reduces the risk of heart attack in adults. Daily aspirin therapy is not recommended for everyone, because bleeding risk rises with age. Ask a doctor before starting aspirin.',
  inside: 'I concatenate strings.',
} as const;

type Chunk = keyof typeof CORPUS;

interface Golden {
  name: string;
  chunk: Chunk;
  query: string;
  options?: Partial<HighlightOptions>;
  html: string;
  highlights: string[];
}

const M = (s: string): string => `<mark><b>${s}</b></mark>`;
const ASPIRIN = CORPUS.aspirin;
const QUERY_21_WORDS = `malaria ${Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ')}`;

const GOLDEN: Golden[] = [
  {
    name: 'defaults: the longest query phrase wins, its parts are not highlighted again',
    chunk: 'plain',
    query: 'what is the cure for malaria',
    html: `Malaria is a deadly disease. There is no ${M('cure for malaria')} yet, but a MALARIA vaccine and a cure are in trials!`,
    highlights: ['cure for malaria'],
  },
  {
    name: 'every case variant is tagged; highlights are distinct texts, at most max_num',
    chunk: 'plain',
    query: 'malaria cure',
    html: `${M('Malaria')} is a deadly disease. There is no ${M('cure')} for ${M('malaria')} yet, but a ${M('MALARIA')} vaccine and a ${M('cure')} are in trials!`,
    highlights: ['Malaria', 'malaria', 'MALARIA'],
  },
  {
    name: 'a phrase ends on a word boundary too ("malaria vacc" is not in "MALARIA vaccine")',
    chunk: 'plain',
    query: 'malaria vacc',
    html: `${M('Malaria')} is a deadly disease. There is no cure for ${M('malaria')} yet, but a ${M('MALARIA')} vaccine and a cure are in trials!`,
    highlights: ['Malaria', 'malaria', 'MALARIA'],
  },
  {
    name: 'max_num 1: one phrase (every occurrence tagged), one highlight',
    chunk: 'plain',
    query: 'malaria cure',
    options: { maxNum: 1 },
    html: `${M('Malaria')} is a deadly disease. There is no cure for ${M('malaria')} yet, but a ${M('MALARIA')} vaccine and a cure are in trials!`,
    highlights: ['Malaria'],
  },
  {
    name: 'stop-word-only query: no phrase, and v1 ignores stop words',
    chunk: 'plain',
    query: 'the and of',
    html: CORPUS.plain,
    highlights: [],
  },
  {
    name: 'a query of 21 words gets no highlights',
    chunk: 'plain',
    query: QUERY_21_WORDS,
    html: CORPUS.plain,
    highlights: [],
  },
  {
    name: 'default delimiters are removed from the query',
    chunk: 'plain',
    query: 'yet, cure',
    html: `Malaria is a deadly disease. There is no ${M('cure')} for malaria ${M('yet')}, but a MALARIA vaccine and a ${M('cure')} are in trials!`,
    highlights: ['cure', 'yet'],
  },
  {
    name: 'no delimiters: the comma stays part of the query word',
    chunk: 'plain',
    query: 'yet, cure',
    options: { delimiters: [] },
    html: `Malaria is a deadly disease. There is no ${M('cure')} for malaria ${M('yet,')} but a MALARIA vaccine and a ${M('cure')} are in trials!`,
    highlights: ['yet,', 'cure'],
  },
  {
    name: 'custom pre/post tags; a phrase across an inline element is tagged per text node',
    chunk: 'nested',
    query: 'quick brown fox',
    options: { preTag: '<em class="hl">', postTag: '</em>' },
    html: '<div class="doc"><h2>Quick Start</h2><p>The <b><em class="hl">quick</em></b> <em class="hl">brown fox</em> jumps over the <i>lazy <u>dog</u></i>.</p><p>Quick foxes are quicker than dogs.</p></div>',
    highlights: ['quick brown fox'],
  },
  {
    name: 'phrase inside nested elements',
    chunk: 'nested',
    query: 'lazy dog',
    html: `<div class="doc"><h2>Quick Start</h2><p>The <b>quick</b> brown fox jumps over the <i>${M('lazy')} <u>${M('dog')}</u></i>.</p><p>Quick foxes are quicker than dogs.</p></div>`,
    highlights: ['lazy dog'],
  },
  {
    name: 'mixed case: the html keeps its case',
    chunk: 'nested',
    query: 'quick start',
    html: `<div class="doc"><h2>${M('Quick Start')}</h2><p>The <b>quick</b> brown fox jumps over the <i>lazy <u>dog</u></i>.</p><p>Quick foxes are quicker than dogs.</p></div>`,
    highlights: ['Quick Start'],
  },
  {
    name: 'a phrase does not run across a block boundary (heading -> paragraph)',
    chunk: 'nested',
    query: 'start the quick',
    html: `<div class="doc"><h2>Quick ${M('Start')}</h2><p>${M('The')} <b>${M('quick')}</b> brown fox jumps over the <i>lazy <u>dog</u></i>.</p><p>Quick foxes are quicker than dogs.</p></div>`,
    highlights: ['The quick', 'Start'],
  },
  {
    name: 'entities are matched decoded and kept as written',
    chunk: 'entities',
    query: "tom's meal",
    html: `<p>Fish &amp; chips &mdash; ${M('Tom&#39;s')} favourite &lt;b&gt;${M('meal')}&lt;/b&gt;, served with salt &amp; vinegar.</p>`,
    highlights: ["Tom's", 'meal'],
  },
  {
    name: 'a phrase containing an entity',
    chunk: 'entities',
    query: 'fish & chips',
    html: `<p>${M('Fish &amp; chips')} &mdash; Tom&#39;s favourite &lt;b&gt;meal&lt;/b&gt;, served with salt &amp; vinegar.</p>`,
    highlights: ['Fish & chips'],
  },
  {
    name: 'attributes are never touched; a phrase spanning </a> is tagged piecewise',
    chunk: 'spanning',
    query: 'search engine',
    html: `<p>Use the <a href="https://example.com/?q=search+engine&amp;x=1" title="search engine">${M('search')}</a> ${M('engine')} to search the engine room.</p>`,
    highlights: ['search engine'],
  },
  {
    name: 'whole words only: not inside concatenate, CATalog or cats',
    chunk: 'repeated',
    query: 'cat',
    html: `${M('Cat')} ${M('cat')} ${M('CAT')}. The ${M('cat')} sat on the mat; concatenate the CATalog of cats.`,
    highlights: ['Cat', 'cat', 'CAT'],
  },
  {
    name: 'script and style content is not text',
    chunk: 'hidden',
    query: 'cats and dogs',
    html: `<style>.cat { color: red }</style><p>Cats &amp; dogs<br>${M('cats and dogs')}</p><script>var cat = "cat";</script>`,
    highlights: ['cats and dogs'],
  },
  {
    name: 'no visible "cat": fallback to v1, windows end at <br>',
    chunk: 'hidden',
    query: 'cat',
    html: `<style>.cat { color: red }</style><p>${M('Cats &amp; dogs')}<br>${M('cats and dogs')}</p><script>var cat = "cat";</script>`,
    highlights: ['Cats & dogs', 'cats and dogs'],
  },
  {
    name: 'a word inside another word is not highlighted (and v1 finds nothing close enough)',
    chunk: 'inside',
    query: 'cat',
    html: CORPUS.inside,
    highlights: [],
  },
  {
    name: 'window 4: two words each side, borrowed from the right at the start of the text',
    chunk: 'aspirin',
    query: 'aspirin bleeding',
    options: { window: 4 },
    html: `${M('Aspirin')} reduces the risk of heart attack in adults. Daily ${M('aspirin')} therapy is not recommended for everyone, because ${M('bleeding')} risk rises with age. Ask a doctor before starting ${M('aspirin')}.`,
    highlights: [`${M('Aspirin')} reduces the risk of`, `adults. Daily ${M('aspirin')} therapy is`, `everyone, because ${M('bleeding')} risk rises`],
  },
  {
    name: 'stop words inside a phrase are kept',
    chunk: 'aspirin',
    query: 'the risk of',
    html: `Aspirin reduces ${M('the risk of')} heart attack in adults. Daily aspirin therapy is not recommended for everyone, because bleeding risk rises with age. Ask a doctor before starting aspirin.`,
    highlights: ['the risk of'],
  },
  {
    name: 'v1, max_length 3, threshold 0.5: misspellings match',
    chunk: 'aspirin',
    query: 'asprin bleding risks',
    options: { strategy: 'v1', maxLength: 3, threshold: 0.5 },
    html: `${M('Aspirin reduces the')} ${M('risk of heart')} attack in adults. Daily aspirin therapy is not recommended for everyone, ${M('because bleeding risk')} rises with age. Ask a doctor before starting aspirin.`,
    highlights: ['Aspirin reduces the', 'risk of heart', 'because bleeding risk'],
  },
  {
    name: 'v1, max_length 3, threshold 0.95: "asprin" (0.93 to aspirin) no longer qualifies',
    chunk: 'aspirin',
    query: 'asprin bleding risks',
    options: { strategy: 'v1', maxLength: 3, threshold: 0.95 },
    html: `Aspirin reduces the ${M('risk of heart')} attack in adults. Daily aspirin therapy is not recommended for everyone, ${M('because bleeding risk')} rises with age. Ask a doctor before starting aspirin.`,
    highlights: ['risk of heart', 'because bleeding risk'],
  },
  {
    name: 'v1 with window 2: overlapping contexts merge into one highlight',
    chunk: 'aspirin',
    query: 'asprin bleding risks',
    options: { strategy: 'v1', maxLength: 3, threshold: 0.5, window: 2 },
    html: `${M('Aspirin reduces the')} ${M('risk of heart')} attack in adults. Daily aspirin therapy is not recommended for everyone, ${M('because bleeding risk')} rises with age. Ask a doctor before starting aspirin.`,
    highlights: [`${M('Aspirin reduces the')} ${M('risk of heart')} attack`, `everyone, ${M('because bleeding risk')} rises`],
  },
  {
    name: 'v1, delimiters [";"] and max_length 0: the whole text is one window',
    chunk: 'aspirin',
    query: 'aspirin doctor',
    options: { strategy: 'v1', delimiters: [';'], maxLength: 0 },
    html: M(ASPIRIN),
    highlights: [ASPIRIN],
  },
  {
    name: 'v1 defaults: windows of at most 8 words within sentences',
    chunk: 'aspirin',
    query: 'aspirin doctor',
    options: { strategy: 'v1' },
    html: `${M('Aspirin reduces the risk of heart attack in')} adults. ${M('Daily aspirin therapy is not recommended for everyone,')} because bleeding risk rises with age. ${M('Ask a doctor before starting aspirin.')}`,
    highlights: ['Aspirin reduces the risk of heart attack in', 'Daily aspirin therapy is not recommended for everyone,', 'Ask a doctor before starting aspirin.'],
  },
  {
    name: 'exactmatch without a match falls back to v1',
    chunk: 'aspirin',
    query: 'asprin',
    html: `${M('Aspirin reduces the risk of heart attack in')} adults. ${M('Daily aspirin therapy is not recommended for everyone,')} because bleeding risk rises with age. ${M('Ask a doctor before starting aspirin.')}`,
    highlights: ['Aspirin reduces the risk of heart attack in', 'Daily aspirin therapy is not recommended for everyone,', 'Ask a doctor before starting aspirin.'],
  },
  {
    name: 'threshold 1.0: no fallback',
    chunk: 'aspirin',
    query: 'asprin',
    options: { threshold: 1 },
    html: ASPIRIN,
    highlights: [],
  },
];

/** Removes every inserted pre/post tag. */
const stripTags = (html: string, pre: string, post: string): string => html.split(pre).join('').split(post).join('');

/**
 * Checks the structure of a highlighted html against its original: tags alternate pre/post, the
 * text between a pair holds no markup of the original (so nesting stays well-formed), and no tag
 * sits inside a tag, comment, entity, script or style of the original.
 */
function expectWellFormed(original: string, out: string, pre: string, post: string): void {
  const forbidden: [number, number][] = [];
  for (const m of original.matchAll(/<(script|style)\b[\s\S]*?<\/\1\s*>|<!--[\s\S]*?-->|<[^>]*>|&#?[a-zA-Z0-9]+;?/gi)) {
    forbidden.push([m.index, m.index + m[0].length]);
  }
  let i = 0;
  let offset = 0; // position in the original
  let open = -1;
  while (i < out.length) {
    const isPre = out.startsWith(pre, i);
    const isPost = !isPre && out.startsWith(post, i);
    if (isPre || isPost) {
      expect(forbidden.some(([a, b]) => offset > a && offset < b), `tag inside markup at ${offset}`).toBe(false);
      if (isPre) {
        expect(open, 'pre tag while one is open').toBe(-1);
        open = offset;
        i += pre.length;
      } else {
        expect(open, 'post tag without pre tag').toBeGreaterThanOrEqual(0);
        expect(original.slice(open, offset)).not.toContain('<');
        expect(offset).toBeGreaterThan(open);
        open = -1;
        i += post.length;
      }
    } else {
      i++;
      offset++;
    }
  }
  expect(open).toBe(-1);
}

describe('highlightChunk golden cases', () => {
  it.each(GOLDEN)('$name', ({ chunk, query, options, html, highlights }) => {
    const opts = { ...DEFAULT_HIGHLIGHT_OPTIONS, ...options };
    const original = CORPUS[chunk];
    const out = highlightChunk(original, query, opts);
    expect(out.html).toBe(html);
    expect(out.highlights).toEqual(highlights);
    expect(stripTags(out.html, opts.preTag, opts.postTag)).toBe(original);
    expectWellFormed(original, out.html, opts.preTag, opts.postTag);
  });

  it('every corpus chunk and query with default options keeps the html well-formed', () => {
    for (const original of Object.values(CORPUS)) {
      for (const { query } of GOLDEN) {
        for (const strategy of ['exactmatch', 'v1'] as const) {
          const opts = { ...DEFAULT_HIGHLIGHT_OPTIONS, strategy, threshold: 0.5 };
          const out = highlightChunk(original, query, opts);
          expect(stripTags(out.html, opts.preTag, opts.postTag)).toBe(original);
          expectWellFormed(original, out.html, opts.preTag, opts.postTag);
        }
      }
    }
  });

  it('is deterministic and leaves empty inputs alone', () => {
    const a = highlightChunk(CORPUS.aspirin, 'asprin', DEFAULT_HIGHLIGHT_OPTIONS);
    expect(highlightChunk(CORPUS.aspirin, 'asprin', DEFAULT_HIGHLIGHT_OPTIONS)).toEqual(a);
    expect(highlightChunk('', 'cat', DEFAULT_HIGHLIGHT_OPTIONS)).toEqual({ html: '', highlights: [] });
    expect(highlightChunk(CORPUS.plain, '   ', DEFAULT_HIGHLIGHT_OPTIONS)).toEqual({ html: CORPUS.plain, highlights: [] });
    expect(highlightChunk(CORPUS.plain, 'malaria', { ...DEFAULT_HIGHLIGHT_OPTIONS, maxNum: 0 })).toEqual({ html: CORPUS.plain, highlights: [] });
  });

  it('exactly 20 words still highlight', () => {
    const q20 = QUERY_21_WORDS.split(' ').slice(0, 20).join(' ');
    expect(highlightChunk(CORPUS.plain, q20, DEFAULT_HIGHLIGHT_OPTIONS).highlights).toEqual(['Malaria', 'malaria', 'MALARIA']);
  });

  it('keeps generated html well-formed (property)', () => {
    const word = fc.constantFrom('cat', 'Cat', 'dog', 'the', 'fish', 'chips', 'concat', 'a', 'of', 'foo', 'bar');
    const text = fc.array(word, { minLength: 1, maxLength: 5 }).map((w) => w.join(' '));
    const entity = fc.constantFrom('&amp;', '&#39;', '&lt;', '&nbsp;', ' & ');
    const inline = fc.constantFrom('b', 'i', 'span', 'a');
    const block = fc.constantFrom('p', 'li', 'div', 'h2');
    const node: fc.Arbitrary<string> = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        text,
        entity,
        fc.tuple(inline, fc.array(tie('node'), { maxLength: 3 })).map(([t, kids]) => `<${t} title="cat dog">${kids.join(' ')}</${t}>`),
        fc.tuple(block, fc.array(tie('node'), { maxLength: 3 })).map(([t, kids]) => `<${t}>${kids.join('')}</${t}>`),
        fc.constant('<br>'),
        fc.constant('<script>cat("dog")</script>'),
        fc.constant('<!-- cat -->'),
      ),
    })).node;
    const html = fc.array(node, { minLength: 1, maxLength: 5 }).map((n) => n.join(''));
    const query = fc.array(word, { minLength: 1, maxLength: 4 }).map((w) => w.join(' '));
    const options = fc.record({
      strategy: fc.constantFrom('exactmatch' as const, 'v1' as const),
      maxNum: fc.integer({ min: 1, max: 4 }),
      maxLength: fc.integer({ min: 0, max: 4 }),
      threshold: fc.constantFrom(0.5, 0.8, 1),
      window: fc.constantFrom(0, 2),
    });
    fc.assert(
      fc.property(html, query, options, (h, q, o) => {
        const opts = { ...DEFAULT_HIGHLIGHT_OPTIONS, ...o };
        const out = highlightChunk(h, q, opts);
        expect(stripTags(out.html, opts.preTag, opts.postTag)).toBe(h);
        expectWellFormed(h, out.html, opts.preTag, opts.postTag);
        expect(out.highlights.length).toBeLessThanOrEqual(opts.maxNum);
      }),
      { numRuns: 300 },
    );
  });
});

describe('Jaro-Winkler', () => {
  it.each([
    ['martha', 'marhta', 0.9611],
    ['dwayne', 'duane', 0.84],
    ['dixon', 'dicksonx', 0.8133],
    ['cat', 'concatenate', 0.7818],
    ['malaria', 'malaria', 1],
    ['abc', 'xyz', 0],
    ['', 'abc', 0],
  ])('jaroWinkler(%j, %j) = %f', (a, b, sim) => {
    expect(jaroWinkler(a, b)).toBeCloseTo(sim, 4);
  });

  it('the bounded version equals the full one wherever it reaches the threshold (oracle)', () => {
    const w = fc.stringMatching(/^[a-eé]{0,9}$/);
    fc.assert(
      fc.property(fc.array(w, { minLength: 1, maxLength: 4 }), w, fc.constantFrom(0, 0.5, 0.8, 0.95), (query, word, min) => {
        const out = new Float64Array(query.length);
        new JaroWinklerAtLeast(query, min).scores(word, out);
        query.forEach((q, k) => {
          const sim = jaroWinkler(q, word);
          expect(out[k]).toBeCloseTo(sim >= min ? sim : 0, 12);
        });
      }),
      { numRuns: 500 },
    );
  });
});

describe('resolveHighlightOptions', () => {
  const d = DEFAULT_HIGHLIGHT_OPTIONS;

  it('returns null when highlighting is not asked for or turned off', () => {
    expect(resolveHighlightOptions({})).toBeNull();
    expect(resolveHighlightOptions({ query: 'x', highlight_options: null })).toBeNull();
    expect(resolveHighlightOptions({ highlight_options: { highlight_results: false } })).toBeNull();
    expect(resolveHighlightOptions({ highlight_results: false })).toBeNull();
    expect(resolveHighlightOptions({ pre_tag: '<i>' })).toBeNull();
  });

  it('applies the defaults', () => {
    expect(resolveHighlightOptions({ highlight_options: {} })).toEqual(d);
    expect(resolveHighlightOptions({ highlight_results: true })).toEqual(d);
    expect(d).toMatchObject({
      strategy: 'exactmatch',
      threshold: 0.8,
      delimiters: ['?', ',', '.', '!'],
      maxLength: 8,
      maxNum: 3,
      window: 0,
      preTag: '<mark><b>',
      postTag: '</b></mark>',
    });
  });

  it('reads the nested object, nulls meaning default', () => {
    expect(
      resolveHighlightOptions({
        highlight_options: {
          highlight_strategy: 'v1',
          highlight_threshold: 0.5,
          highlight_delimiters: [';'],
          highlight_max_length: 4,
          highlight_max_num: 1,
          highlight_window: 6,
          pre_tag: '<em>',
          post_tag: '</em>',
          highlight_results: null,
          unknown_key: 1,
        },
      }),
    ).toEqual({ strategy: 'v1', threshold: 0.5, delimiters: [';'], maxLength: 4, maxNum: 1, window: 6, preTag: '<em>', postTag: '</em>' });
  });

  it('folds the legacy flat keys only when highlight_options is absent, never pre/post tags', () => {
    expect(resolveHighlightOptions({ highlight_max_num: 5, highlight_strategy: 'v1', pre_tag: '<i>', post_tag: '</i>' })).toEqual({
      ...d,
      maxNum: 5,
      strategy: 'v1',
    });
    expect(resolveHighlightOptions({ highlight_options: { highlight_max_num: 2 }, highlight_max_num: 7, highlight_window: 4 })).toEqual({
      ...d,
      maxNum: 2,
    });
  });

  it.each([
    [{ highlight_options: [] }, 'highlight_options must be an object'],
    [{ highlight_options: { highlight_threshold: 1.5 } }, 'highlight_options.highlight_threshold'],
    [{ highlight_options: { highlight_threshold: '0.5' } }, 'highlight_options.highlight_threshold'],
    [{ highlight_options: { highlight_strategy: 'fuzzy' } }, 'highlight_options.highlight_strategy'],
    [{ highlight_options: { highlight_max_num: -1 } }, 'highlight_options.highlight_max_num'],
    [{ highlight_options: { highlight_max_length: 2.5 } }, 'highlight_options.highlight_max_length'],
    [{ highlight_options: { highlight_delimiters: ',' } }, 'highlight_options.highlight_delimiters'],
    [{ highlight_options: { highlight_delimiters: [1] } }, 'highlight_options.highlight_delimiters'],
    [{ highlight_options: { highlight_results: 'yes' } }, 'highlight_options.highlight_results'],
    [{ highlight_options: { pre_tag: 1 } }, 'highlight_options.pre_tag'],
    [{ highlight_options: { highlight_results: false, highlight_window: -2 } }, 'highlight_options.highlight_window'],
    [{ highlight_window: -3 }, 'highlight_window must be'],
    [{ highlight_threshold: -0.1 }, 'highlight_threshold must be'],
  ])('%j -> 400 naming the field', (body, field) => {
    let err: unknown;
    try {
      resolveHighlightOptions(body);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(QuarryError);
    expect((err as QuarryError).code).toBe('bad_request');
    expect((err as QuarryError).message).toContain(field);
  });
});
