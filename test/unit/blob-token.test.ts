/** The embedded blob store's URL signatures: each granted field is covered, and expiry is checked after the signature. */
import { describe, expect, it } from 'vitest';
import { signBlobGrant, verifyBlobGrant, type BlobGrant } from '../../core/blob/blob-token.js';

const SECRET = 'a'.repeat(64);
const NOW = 1_800_000_000;
const PUT: BlobGrant = { method: 'PUT', key: 'datasets/d1/files/f1', expires: NOW + 60, maxBytes: 1000 };
const GET: BlobGrant = { method: 'GET', key: 'datasets/d1/files/f1', expires: NOW + 60, fileName: 'rows.csv', contentType: 'text/csv' };

describe('blob grant signatures', () => {
  it('accepts the grant it signed, for PUT and GET', () => {
    expect(verifyBlobGrant(SECRET, PUT, signBlobGrant(SECRET, PUT), NOW)).toBe('ok');
    expect(verifyBlobGrant(SECRET, GET, signBlobGrant(SECRET, GET), NOW)).toBe('ok');
  });

  it('refuses a grant with any field changed', () => {
    const putSig = signBlobGrant(SECRET, PUT);
    const getSig = signBlobGrant(SECRET, GET);
    const tampered: [BlobGrant, string][] = [
      [{ ...PUT, method: 'GET' }, putSig],
      [{ ...PUT, key: 'datasets/d1/files/f2' }, putSig],
      [{ ...PUT, expires: PUT.expires + 1 }, putSig],
      [{ ...PUT, maxBytes: 1001 }, putSig],
      [{ ...GET, method: 'PUT' }, getSig],
      [{ ...GET, fileName: 'rows2.csv' }, getSig],
      [{ ...GET, contentType: 'text/html' }, getSig],
      [{ ...GET, contentType: undefined }, getSig],
    ];
    for (const [grant, sig] of tampered) expect(verifyBlobGrant(SECRET, grant, sig, NOW), JSON.stringify(grant)).toBe('invalid');
  });

  it('refuses another secret, a changed signature and a missing one', () => {
    const sig = signBlobGrant(SECRET, PUT);
    expect(verifyBlobGrant('b'.repeat(64), PUT, sig, NOW)).toBe('invalid');
    expect(verifyBlobGrant(SECRET, PUT, (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1), NOW)).toBe('invalid');
    expect(verifyBlobGrant(SECRET, PUT, sig.slice(1), NOW)).toBe('invalid');
    expect(verifyBlobGrant(SECRET, PUT, '', NOW)).toBe('invalid');
  });

  it('keeps fields apart: text moved from one field to the next signs differently', () => {
    const a: BlobGrant = { method: 'GET', key: 'k', expires: NOW, fileName: 'a","b', contentType: 'c' };
    const b: BlobGrant = { method: 'GET', key: 'k', expires: NOW, fileName: 'a', contentType: 'b","c' };
    expect(signBlobGrant(SECRET, a)).not.toBe(signBlobGrant(SECRET, b));
  });

  it('is valid through its expiry second and expired after it', () => {
    const sig = signBlobGrant(SECRET, PUT);
    expect(verifyBlobGrant(SECRET, PUT, sig, PUT.expires)).toBe('ok');
    expect(verifyBlobGrant(SECRET, PUT, sig, PUT.expires + 1)).toBe('expired');
    // A forged later expiry is a bad signature, not an expired URL.
    expect(verifyBlobGrant(SECRET, { ...PUT, expires: NOW + 3600 }, sig, PUT.expires + 1)).toBe('invalid');
  });
});
