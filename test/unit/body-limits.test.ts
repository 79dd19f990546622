import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { bodyLimits } from '../../facade/body-limits.js';
import { JsonShapeScanner, jsonShape } from '../../facade/json-shape.js';
import { MAX_ARRAY_ELEMENTS, MAX_CONTAINERS, MAX_DEPTH } from '../../facade/middleware/body.js';

describe('per-route body limits', () => {
  it('has documented defaults: 1 MiB, 128 KiB per chunk, 10 organizations per user', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ defaultBodyLimitBytes: 256 * 1024, chunkBodyBytes: 128 * 1024, maxOrganizationsPerUser: 10 });
    const c2 = loadConfig({ QUARRY_DEFAULT_BODY_LIMIT_BYTES: '4096', QUARRY_CHUNK_BODY_BYTES: '2048', QUARRY_MAX_ORGANIZATIONS_PER_USER: '2' });
    expect(c2).toMatchObject({ defaultBodyLimitBytes: 4096, chunkBodyBytes: 2048, maxOrganizationsPerUser: 2 });
    expect(() => loadConfig({ QUARRY_MAX_ORGANIZATIONS_PER_USER: '0' })).toThrow(/QUARRY_MAX_ORGANIZATIONS_PER_USER/);
  });

  it('sizes bulk chunk writes from the batch limit and the per-chunk allowance, the rest small', () => {
    const limitOf = bodyLimits(loadConfig({}));
    expect(limitOf('POST /api/chunk')).toBe(120 * 128 * 1024 + 64 * 1024);
    expect(limitOf('PUT /api/chunk')).toBe(128 * 1024 + 64 * 1024);
    expect(limitOf('POST /api/chunk_group')).toBe(1000 * 16 * 1024 + 64 * 1024);
    expect(limitOf('POST /api/organization/api_key')).toBe(64 * 1024);
    expect(limitOf('POST /api/chunk/split')).toBe(1024 * 1024 + 64 * 1024);
    expect(limitOf('POST /api/chunk/search')).toBe(256 * 1024);
    // A topic message's rag_context may hold a chunk's 1 MiB of text, escaped.
    for (const route of ['POST /api/chunk/generate', 'POST /api/message', 'PUT /api/message', 'PATCH /api/message', 'DELETE /api/message']) {
      expect(limitOf(route), route).toBe(4 * 1024 * 1024 + 64 * 1024);
    }
    expect(limitOf('POST /api/topic')).toBe(256 * 1024);
    expect(limitOf('POST /api/anything/else')).toBe(256 * 1024);
  });

  it('never exceeds QUARRY_BODY_LIMIT_BYTES', () => {
    const limitOf = bodyLimits(loadConfig({ QUARRY_BODY_LIMIT_BYTES: '2048' }));
    for (const route of ['POST /api/chunk', 'POST /api/chunk_group', 'POST /api/chunk/search', 'POST /api/dataset']) expect(limitOf(route)).toBe(2048);
  });
});

describe('jsonShape', () => {
  it('counts depth outside strings only, escapes included', () => {
    expect(jsonShape('['.repeat(MAX_DEPTH) + ']'.repeat(MAX_DEPTH), MAX_DEPTH, MAX_CONTAINERS)).toBe('ok');
    expect(jsonShape('['.repeat(MAX_DEPTH + 1) + ']'.repeat(MAX_DEPTH + 1), MAX_DEPTH, MAX_CONTAINERS)).toBe('too_deep');
    expect(jsonShape(JSON.stringify({ s: '['.repeat(1000) + '\\"[{' }), MAX_DEPTH, MAX_CONTAINERS)).toBe('ok');
    expect(jsonShape('{"a":"\\\\"}' + '['.repeat(3), 2, 100)).toBe('too_deep');
  });

  it('counts containers, and stays linear on a large body', () => {
    expect(jsonShape('[' + '[],'.repeat(99) + '[]]', 10, 101)).toBe('ok');
    expect(jsonShape('[' + '[],'.repeat(100) + '[]]', 10, 101)).toBe('too_many');
    const big = '[' + '"x",'.repeat(2_000_000) + '1]';
    const started = performance.now();
    expect(jsonShape(big, MAX_DEPTH, MAX_CONTAINERS)).toBe('ok');
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses an array longer than the cap, wherever it is, and no object however wide', () => {
    const ids = (n: number) => JSON.stringify({ chunk_html: 'x', group_tracking_ids: Array.from({ length: n }, (_, i) => `g,${i}`) });
    expect(jsonShape(ids(MAX_ARRAY_ELEMENTS), MAX_DEPTH, MAX_CONTAINERS, MAX_ARRAY_ELEMENTS)).toBe('ok');
    const where = { key: null as string | null };
    expect(jsonShape(ids(MAX_ARRAY_ELEMENTS + 1), MAX_DEPTH, MAX_CONTAINERS, MAX_ARRAY_ELEMENTS, where)).toBe('too_long');
    expect(where.key).toBe('group_tracking_ids');
    // The key is decoded from the body's bytes.
    const named = { key: null as string | null };
    expect(jsonShape(Buffer.from(JSON.stringify({ 'grüße_€': Array.from({ length: MAX_ARRAY_ELEMENTS + 1 }, () => 1) })), MAX_DEPTH, MAX_CONTAINERS, MAX_ARRAY_ELEMENTS, named)).toBe('too_long');
    expect(named.key).toBe('grüße_€');
    expect(jsonShape(`[[${'1,'.repeat(MAX_ARRAY_ELEMENTS)}1]]`, MAX_DEPTH, MAX_CONTAINERS, MAX_ARRAY_ELEMENTS)).toBe('too_long');
    const wide = JSON.stringify(Object.fromEntries(Array.from({ length: MAX_ARRAY_ELEMENTS * 2 }, (_, i) => [`k${i}`, i])));
    expect(jsonShape(wide, MAX_DEPTH, MAX_CONTAINERS, MAX_ARRAY_ELEMENTS)).toBe('ok');
  });

  it('agrees with a plain character-by-character scan on any text (strings skipped by indexOf)', () => {
    // The straightforward scan it replaced: a backslash inside a string escapes the next character.
    const reference = (text: string, maxDepth: number, maxContainers: number, maxElements: number): string => {
      let depth = 0;
      let containers = 0;
      let inString = false;
      const stack: { array: boolean; elements: number }[] = [];
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (inString) {
          if (c === '\\') i++;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === ',') {
          const top = stack.at(-1);
          if (top?.array && ++top.elements > maxElements) return 'too_long';
        } else if (c === '[' || c === '{') {
          if (++depth > maxDepth) return 'too_deep';
          if (++containers > maxContainers) return 'too_many';
          stack.push({ array: c === '[', elements: 1 });
        } else if (c === ']' || c === '}') {
          if (--depth < 0) return 'ok';
          stack.pop();
        }
      }
      return 'ok';
    };
    // Multi-byte characters too: the scan runs over UTF-8 bytes, the reference over characters.
    const text = fc.array(fc.constantFrom('"', '\\', '[', ']', '{', '}', 'a', ',', 'é', '€', '😀'), { maxLength: 60 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 5 }), (t, d, n, e) => {
        expect(jsonShape(t, d, n, e)).toBe(reference(t, d, n, e));
      }),
      { numRuns: 5000 },
    );
  });

  it('gives the same verdict and key when the body arrives in chunks cut anywhere', () => {
    // Cuts fall inside strings, inside runs of backslashes, inside keys and inside UTF-8 characters.
    const piece = fc.constantFrom('"', '\\', '\\\\', '[', ']', '{', '}', 'a', ',', ':', '"k":', '"ké€":[', 'é', '😀', '1');
    const text = fc.array(piece, { maxLength: 40 }).map((cs) => cs.join(''));
    const inChunks = (bytes: Buffer, cuts: number[], d: number, n: number, e: number): { verdict: string; key: string | null } => {
      const scanner = new JsonShapeScanner(d).reset(d, n, e);
      let verdict = 'ok';
      let from = 0;
      for (const cut of [...cuts, bytes.length]) {
        verdict = scanner.push(bytes.subarray(from, cut));
        from = cut;
      }
      return { verdict, key: scanner.tooLongKey };
    };
    // A run of backslashes spread over several chunks: four of them escape each other, the quote closes.
    const run = Buffer.from('["' + '\\'.repeat(4) + '",[[[]]]]');
    expect(jsonShape(run, 3, 100)).toBe('too_deep');
    expect(inChunks(run, Array.from({ length: run.length }, (_, i) => i), 3, 100, 100).verdict).toBe('too_deep');
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 4 }), (t, d, n, e) => {
        const bytes = Buffer.from(t, 'utf8');
        const where = { key: null as string | null };
        const whole = jsonShape(bytes, d, n, e, where);
        // Every single cut, and one byte at a time.
        const cutsList = Array.from({ length: bytes.length + 1 }, (_, i) => [i]);
        cutsList.push(Array.from({ length: bytes.length }, (_, i) => i));
        for (const cuts of cutsList) {
          const got = inChunks(bytes, cuts, d, n, e);
          expect(got.verdict, `cuts ${cuts.join(',')}`).toBe(whole);
          // A key cut by a chunk boundary is not kept (null); otherwise it is the same.
          if (got.verdict === 'too_long' && got.key !== null) expect(got.key).toBe(where.key);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
