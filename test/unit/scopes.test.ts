import { describe, expect, it } from 'vitest';
import { isValidScope, MAX_SCOPE_LENGTH, parseScope, scopesAllow } from '../../facade/scopes.js';

describe('scopesAllow', () => {
  it('null, undefined and [] allow every route (the spec, not the reference implementation)', () => {
    for (const scopes of [null, undefined, []]) expect(scopesAllow(scopes, 'DELETE', '/api/dataset/x')).toBe(true);
  });

  it('matches exact routes, method case-insensitively, with an optional trailing slash', () => {
    const scopes = ['POST /api/chunk/search'];
    expect(scopesAllow(scopes, 'POST', '/api/chunk/search')).toBe(true);
    expect(scopesAllow(scopes, 'post', '/api/chunk/search')).toBe(true);
    expect(scopesAllow(scopes, 'POST', '/api/chunk/search/')).toBe(true);
    expect(scopesAllow(scopes, 'GET', '/api/chunk/search')).toBe(false);
    expect(scopesAllow(scopes, 'POST', '/api/chunk')).toBe(false);
    expect(scopesAllow(scopes, 'POST', '/api/chunk/search/more')).toBe(false);
    expect(scopesAllow(scopes, 'POST', '/x/api/chunk/search')).toBe(false);
  });

  it('{param} stands for exactly one non-empty path segment', () => {
    const scopes = ['GET /api/chunk/{chunk_id}', 'GET /api/chunk_group/{group_id}/{page}'];
    expect(scopesAllow(scopes, 'GET', '/api/chunk/3c90c3cc-0d44-4b50-8888-8dd25736052a')).toBe(true);
    expect(scopesAllow(scopes, 'GET', '/api/chunk/a.b~c')).toBe(true);
    expect(scopesAllow(scopes, 'GET', '/api/chunk/')).toBe(false);
    expect(scopesAllow(scopes, 'GET', '/api/chunk/a/b')).toBe(false);
    expect(scopesAllow(scopes, 'GET', '/api/chunk_group/g/2')).toBe(true);
    expect(scopesAllow(scopes, 'GET', '/api/chunk_group/g')).toBe(false);
  });

  it('treats regex characters in scopes literally', () => {
    expect(scopesAllow(['GET /api/a.b'], 'GET', '/api/aXb')).toBe(false);
    expect(scopesAllow(['GET /api/a.b'], 'GET', '/api/a.b')).toBe(true);
    expect(scopesAllow(['GET /api/(x)+'], 'GET', '/api/xx')).toBe(false);
    expect(scopesAllow(['GET /api/.*'], 'GET', '/api/anything')).toBe(false);
  });

  it('allows when any scope matches and normalises whitespace in scopes', () => {
    expect(scopesAllow(['GET /api/a', '  POST   /api/b '], 'POST', '/api/b')).toBe(true);
  });
});

describe('isValidScope', () => {
  it.each(['GET /api/chunk', 'post /api/chunk/search', 'DELETE /api/chunk/{chunk_id}', 'PUT /api', 'PATCH /api/x'])('%j is valid', (s) => {
    expect(isValidScope(s)).toBe(true);
  });
  it.each(['', 'GET', '/api/chunk', 'FETCH /api/chunk', 'GET api/chunk', 'GET /other', 'GET /api/a b', 'GET  /api/chunk x'])('%j is not', (s) => {
    expect(isValidScope(s)).toBe(false);
  });
  it.each(['POST /api/{}{}{}{}{}{}{}{}{}{}!', 'GET /api/chunk/{}', 'GET /api/chunk/x{id}', 'GET /api/chunk/{id}x', 'GET /api/{a}{b}', 'GET /api/{a/b}', 'GET /api/{a b}', 'GET /api/{a.b}'])(
    'a placeholder that is not a whole segment is refused: %j',
    (s) => {
      const parsed = parseScope(s);
      expect(typeof parsed).toBe('string');
      expect(parsed).toMatch(/segment|spaces/);
    },
  );
  it('refuses a scope longer than the limit, naming it', () => {
    const long = `GET /api/${'a'.repeat(MAX_SCOPE_LENGTH)}`;
    expect(parseScope(long)).toMatch(String(MAX_SCOPE_LENGTH));
  });
});

describe('pathological scopes stay linear (regression: regex backtracking took 13 s per request)', () => {
  it('the scope that used to backtrack is refused and matching it costs nothing', () => {
    const evil = 'POST /api/{}{}{}{}{}{}{}{}{}{}!';
    const path = '/api/' + 'a'.repeat(5000);
    const started = performance.now();
    for (let i = 0; i < 100; i++) expect(scopesAllow([evil], 'POST', path)).toBe(false);
    // The regex version needed seconds for ONE call at 30 characters; 100 calls here must take well under a second.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('many long scopes against a long path are matched in bounded time', () => {
    const scopes = Array.from({ length: 128 }, (_, i) => `POST /api/${'{p}/'.repeat(60)}x${i}`);
    const path = '/api/' + 'seg/'.repeat(60) + 'y';
    const started = performance.now();
    for (let i = 0; i < 200; i++) expect(scopesAllow(scopes, 'POST', path)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(scopesAllow(scopes, 'POST', '/api/' + 'seg/'.repeat(60) + 'x7')).toBe(true);
  });
});
