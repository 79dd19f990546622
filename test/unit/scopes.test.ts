import { describe, expect, it } from 'vitest';
import { isValidScope, scopesAllow } from '../../facade/scopes.js';

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
});
