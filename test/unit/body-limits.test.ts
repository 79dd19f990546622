import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { bodyLimits } from '../../facade/body-limits.js';
import { jsonShape, MAX_CONTAINERS, MAX_DEPTH } from '../../facade/middleware/body.js';

describe('per-route body limits', () => {
  it('has documented defaults: 1 MiB, 128 KiB per chunk, 10 organizations per user', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ defaultBodyLimitBytes: 1024 * 1024, chunkBodyBytes: 128 * 1024, maxOrganizationsPerUser: 10 });
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
    expect(limitOf('POST /api/chunk/search')).toBe(1024 * 1024);
    expect(limitOf('POST /api/anything/else')).toBe(1024 * 1024);
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
});
