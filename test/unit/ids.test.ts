import { describe, expect, it } from 'vitest';
import { constantTimeEqual, hashApiKey, isUuid, newApiKey, newId } from '../../core/domain/ids.js';

describe('API keys', () => {
  it('look like tr- followed by 32 alphanumerics and do not repeat', () => {
    const keys = Array.from({ length: 2000 }, newApiKey);
    for (const k of keys) expect(k).toMatch(/^tr-[A-Za-z0-9]{32}$/);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('use the whole alphabet roughly evenly (no modulo bias)', () => {
    const counts = new Map<string, number>();
    const n = 4000;
    for (let i = 0; i < n; i++) for (const ch of newApiKey().slice(3)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (n * 32) / 62;
    // ~2065 per character; a 248/256 bias-free sampler stays well within ±15%.
    for (const [ch, c] of counts) expect(Math.abs(c - expected) / expected, ch).toBeLessThan(0.15);
  });

  it('are stored as their blake3 hex digest (published test vectors)', () => {
    expect(hashApiKey('')).toBe('af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262');
    expect(hashApiKey('abc')).toBe('6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85');
    const key = newApiKey();
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).toBe(hashApiKey(key));
    expect(hashApiKey(key)).not.toBe(hashApiKey(key + 'x'));
  });
});

describe('constantTimeEqual', () => {
  it('is string equality', () => {
    expect(constantTimeEqual('tr-abc', 'tr-abc')).toBe(true);
    expect(constantTimeEqual('tr-abc', 'tr-abd')).toBe(false);
    expect(constantTimeEqual('tr-abc', 'tr-ab')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
    expect(constantTimeEqual('', 'a')).toBe(false);
    expect(constantTimeEqual('ü', 'u')).toBe(false);
    expect(constantTimeEqual('ключ', 'ключ')).toBe(true);
  });

  it('takes about as long whether the strings differ at the first or the last character', () => {
    const size = 1 << 20;
    const a = 'a'.repeat(size);
    const early = 'b' + 'a'.repeat(size - 1);
    const late = 'a'.repeat(size - 1) + 'b';
    const median = (other: string) => {
      const times: number[] = [];
      for (let i = 0; i < 41; i++) {
        const start = process.hrtime.bigint();
        constantTimeEqual(a, other);
        times.push(Number(process.hrtime.bigint() - start));
      }
      return times.sort((x, y) => x - y)[20]!;
    };
    median(early);
    median(late);
    // A short-circuiting comparison is orders of magnitude faster on an early difference.
    const ratio = median(late) / median(early);
    expect(ratio).toBeGreaterThan(1 / 3);
    expect(ratio).toBeLessThan(3);
  });
});

describe('ids', () => {
  it('newId is a time-ordered v7 UUID, each greater than the last, and isUuid recognises the canonical form only', () => {
    const before = Date.now();
    const ids = Array.from({ length: 1000 }, () => newId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Increasing within a process (even within one millisecond): store indexes on ids grow at their end.
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!, `${ids[i - 1]} < ${ids[i]}`).toBe(true);
    // Each id has random bits of its own (ids are drawn from a pool refilled every 256).
    expect(new Set(ids.map((id) => id.slice(-12))).size).toBe(ids.length);
    // The first 48 bits are the creation time in ms.
    const ms = parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now());
    expect(isUuid(newId())).toBe(true);
    expect(isUuid('00000000-0000-0000-0000-000000000000')).toBe(true);
    expect(isUuid('3C90C3CC-0D44-4B50-8888-8DD25736052A')).toBe(true);
    for (const bad of ['', 'x', '3c90c3cc0d444b5088888dd25736052a', '{3c90c3cc-0d44-4b50-8888-8dd25736052a}', ' 3c90c3cc-0d44-4b50-8888-8dd25736052a', '3c90c3cc-0d44-4b50-8888-8dd25736052g', '3c90c3cc-0d44-4b50-8888-8dd25736052a\n']) {
      expect(isUuid(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});
