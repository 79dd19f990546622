/**
 * The router's remembered route match (facade/routes/router.ts) answers exactly as @koa/router's
 * own match, for every route and method, for paths seen before or not, after a caller changed an
 * earlier answer, past the memory's size, and after a route is added.
 */
import Router from '@koa/router';
import { describe, expect, it } from 'vitest';
import type { RequestState } from '../../facade/context.js';
import { MATCH_CACHE_ENTRIES, MATCH_CACHE_PATH_CHARS, newRouter, type QuarryRouter } from '../../facade/routes/router.js';

const ROUTES: [string, string][] = [
  ['post', '/api/chunk/search'],
  ['post', '/api/chunk'],
  ['put', '/api/chunk'],
  ['get', '/api/chunk/:chunk_id'],
  ['delete', '/api/chunk/:chunk_id'],
  ['get', '/api/dataset/:dataset_id'],
  ['post', '/api/chunk_group/chunks'],
  ['get', '/api/health'],
];

function register(router: QuarryRouter | Router<RequestState>): void {
  for (const [method, path] of ROUTES) (router as unknown as Record<string, (p: string, h: () => void) => void>)[method]!(path, () => undefined);
}

/** A match as comparable data: the layers by pattern and methods. */
const shape = (m: ReturnType<QuarryRouter['match']>) => ({
  path: m.path.map((l) => `${l.methods.join('|')} ${String(l.path)}`),
  pathAndMethod: m.pathAndMethod.map((l) => `${l.methods.join('|')} ${String(l.path)}`),
  route: m.route,
});

describe('remembered route match', () => {
  it('answers as @koa/router does, seen or not, whatever a caller did to an earlier answer', () => {
    const remembered = newRouter();
    const plain = new Router<RequestState>();
    register(remembered);
    register(plain);
    const long = `/api/chunk/${'x'.repeat(MATCH_CACHE_PATH_CHARS)}`;
    const paths = ['/api/chunk/search', '/api/chunk', '/api/chunk/abc', '/api/chunk/abc/def', '/api/dataset/x', '/api/health', '/nothing', '/api/chunk_group/chunks', long];
    for (let round = 0; round < 3; round++) {
      for (const path of paths) {
        for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS']) {
          const got = remembered.match(path, method);
          expect(shape(got), `${method} ${path}`).toEqual(shape(plain.match(path, method)));
          // A caller that changes its answer (a nested router appends to ctx.matched) changes no other.
          got.path.push(got.path[0]!);
          got.pathAndMethod.length = 0;
        }
      }
    }
  });

  it('stays right past its size and when a route is added', () => {
    const remembered = newRouter();
    const plain = new Router<RequestState>();
    register(remembered);
    register(plain);
    for (let i = 0; i < MATCH_CACHE_ENTRIES * 2 + 5; i++) {
      expect(shape(remembered.match(`/api/chunk/id${i}`, 'GET'))).toEqual(shape(plain.match(`/api/chunk/id${i}`, 'GET')));
    }
    expect(remembered.match('/api/late', 'GET').route).toBe(false);
    remembered.get('/api/late', () => undefined);
    expect(remembered.match('/api/late', 'GET').route).toBe(true);
  });
});
