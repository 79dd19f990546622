/**
 * The catalog of hostile requests one tenant can send: huge and deep bodies, pathological regex
 * and HTML inputs, huge arrays, long queries, slow searches racing writes. Shared by the
 * adversarial suite (`test/adversarial/tenant-isolation.test.ts`, which checks that a second
 * tenant stays correct and fast while each runs) and the soak bench (`bench/soak.ts`, which runs
 * them under load for minutes and watches memory). Plain fetch, no test framework: a bench must
 * be able to import it.
 */

/** The tenant that attacks: its organization, keys and a dataset of its own. */
export interface AttackTarget {
  readonly baseUrl: string;
  readonly orgId: string;
  /** Owner key of the attacking organization (role 2). */
  readonly ownerKey: string;
  /** Read-only key of the attacking organization (role 0). */
  readonly readKey: string;
  readonly datasetId: string;
  /** The other tenant, for probes that must not learn anything about it. */
  readonly victim: { readonly orgId: string; readonly datasetId: string };
}

/** What one attack request got back. */
export interface AttackOutcome {
  /** HTTP status, or 'reset' when the server closed the connection before answering. */
  readonly status: number | 'reset';
  readonly ms: number;
  /** The `message` of a JSON error body, if any. */
  readonly message?: string;
  /** The whole body text (first 2 KB), for diagnostics. */
  readonly text: string;
}

/** How a correct service answers an attack. */
export type Expectation =
  /** A 4xx (never 408) with a `{message}`; for a keyless body, a reset before reading it also counts. */
  | 'refused'
  /** Any answer below 500 (2xx when the input is acceptable, 4xx when it is not), within `maxMs`. */
  | 'bounded';

/** One hostile request (or a short sequence that builds up to one). */
export interface Attack {
  readonly name: string;
  readonly expect: Expectation;
  /** Longest a correct service takes to answer it on a 2-core machine. */
  readonly maxMs: number;
  /** Sends it; the outcome is that of the request that matters (the last one). */
  run(t: AttackTarget): Promise<AttackOutcome>;
  /** A keyless body may be refused by closing the connection before it is read. */
  readonly resetOk?: boolean;
  /** Extra checks on the outcome; returns a reason when it is wrong. */
  check?(o: AttackOutcome, t: AttackTarget): string | null;
}

const TIMEOUT_MS = 60_000;

/** Sends one request with a raw body; never throws for HTTP errors or resets. */
export async function send(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<AttackOutcome> {
  const started = performance.now();
  try {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await res.text();
    let message: string | undefined;
    try {
      const parsed = JSON.parse(text) as { message?: unknown };
      if (typeof parsed?.message === 'string') message = parsed.message;
    } catch {
      // Not JSON: judged by the caller.
    }
    return { status: res.status, ms: performance.now() - started, message, text: text.slice(0, 2048) };
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') return { status: 599, ms: performance.now() - started, text: 'client timeout' };
    // A server that refuses a keyless body may close the socket while the client is still sending it.
    return { status: 'reset', ms: performance.now() - started, text: String((err as Error).cause ?? err) };
  }
}

const lazies: (() => string)[] = [];
/** A body built once, on first use or by {@link prepareAttackBodies}. */
function lazy(build: () => string): () => string {
  let value: string | undefined;
  const get = (): string => (value ??= build());
  lazies.push(get);
  return get;
}

/**
 * Builds every large attack body now. A harness that measures a victim from the same process
 * calls it first: building 16 MiB of JSON blocks the client's own event loop, and that would be
 * counted against the server.
 */
export function prepareAttackBodies(): void {
  for (const get of lazies) get();
}

/** JSON text of `n` empty arrays in one array: cheap to send, costly to parse and walk. */
function emptyArrays(bytes: number): string {
  const n = Math.floor(bytes / 3);
  return `[${'[],'.repeat(n)}[]]`;
}

const json = (v: unknown): string => JSON.stringify(v);
const HUGE_ARRAYS = lazy(() => emptyArrays(16 << 20));
const BIG_ARRAYS = lazy(() => emptyArrays(8 << 20));
const DEEP_OPEN = lazy(() => '['.repeat(1_000_000));
const DEEP_FILTER = lazy(() => `{"query":"a","filters":${'['.repeat(200_000)}${']'.repeat(200_000)}}`);
const HTML_A = lazy(() => json({ chunk_html: '<a'.repeat(100_000) }));
const HTML_SCRIPT = lazy(() => json({ chunk_html: '<script x'.repeat(30_000) }));
const HTML_COMMENT = lazy(() => json({ chunk_html: '<!--x<'.repeat(30_000) }));
const GROUP_IDS = lazy(() => json({ chunk_html: 'x', group_tracking_ids: Array.from({ length: 100_000 }, (_, i) => `g${i}`) }));
const MATCH_ANY = lazy(() =>
  json({ query: 'alpha', search_type: 'bm25', filters: { must: [{ field: 'tag_set', match_any: Array.from({ length: 500_000 }, (_, i) => `t${i}`) }] } }),
);
const POLYGON = lazy(() =>
  json({
    query: 'alpha',
    search_type: 'bm25',
    filters: { must: [{ field: 'location', geo_polygon: { points: Array.from({ length: 200_000 }, (_, i) => ({ lat: Math.sin(i) * 10, lon: Math.cos(i) * 10 })) } }] },
  }),
);
const LONG_QUERY = lazy(() => json({ query: 'alpha beta '.repeat(100_000), search_type: 'bm25' }));
const LONG_PREFIX = lazy(() => json({ query: 'al'.repeat(500_000), search_type: 'bm25' }));
const BIG_METADATA = lazy(() => json({ query: 'alpha', search_type: 'bm25', metadata: { blob: 'x'.repeat(900_000) } }));
const ds = (t: AttackTarget, key: string): Record<string, string> => ({ authorization: key, 'tr-dataset': t.datasetId });
const org = (t: AttackTarget, key: string): Record<string, string> => ({ authorization: key, 'tr-organization': t.orgId });

/** Every attack of the catalog. */
export const ATTACKS: readonly Attack[] = [
  {
    name: 'keyless 16 MiB body of empty arrays',
    expect: 'refused',
    maxMs: 5000,
    resetOk: true,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk/search', { 'tr-dataset': t.datasetId }, HUGE_ARRAYS()),
    check: (o) => (o.status === 'reset' || o.status === 401 || o.status === 413 ? null : `expected 401/413 before the body is read, got ${o.status}`),
  },
  {
    name: 'keyless body nested 1,000,000 deep',
    expect: 'refused',
    maxMs: 5000,
    resetOk: true,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk', { 'tr-dataset': t.datasetId }, DEEP_OPEN()),
  },
  {
    name: 'read key: body nested 200,000 deep',
    expect: 'refused',
    maxMs: 5000,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk/search', ds(t, t.readKey), DEEP_FILTER()),
  },
  {
    name: 'read key: 8 MiB body of empty arrays',
    expect: 'refused',
    maxMs: 5000,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk/search', ds(t, t.readKey), BIG_ARRAYS()),
  },
  {
    name: 'scope with adjacent placeholders (ReDoS)',
    expect: 'refused',
    maxMs: 3000,
    async run(t) {
      const scope = `POST /api/${'{}'.repeat(12)}!`;
      const created = await send(t.baseUrl, 'POST', '/api/organization/api_key', org(t, t.ownerKey), json({ name: 'redos', role: 0, scopes: [scope] }));
      if (created.status !== 200) return created;
      // The key exists: use it the way the prober did, on a long path that the regex backtracks over.
      const key = (JSON.parse(created.text) as { api_key: string }).api_key;
      await send(t.baseUrl, 'POST', `/api/${'a'.repeat(40)}`, ds(t, key), '{}');
      return created;
    },
  },
  {
    name: 'chunk_html of 100,000 unclosed "<a" openers',
    expect: 'bounded',
    maxMs: 3000,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk', ds(t, t.ownerKey), HTML_A()),
  },
  {
    name: 'chunk_html of 30,000 unclosed "<script" openers',
    expect: 'bounded',
    maxMs: 3000,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk', ds(t, t.ownerKey), HTML_SCRIPT()),
  },
  {
    name: 'chunk_html of 60,000 unclosed comments',
    expect: 'bounded',
    maxMs: 3000,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk', ds(t, t.ownerKey), HTML_COMMENT()),
  },
  {
    name: 'RERANKER_BASE_URL ending in 60,000 slashes',
    expect: 'refused',
    maxMs: 3000,
    async run(t) {
      // A dataset of its own: when the update is (wrongly) accepted, every later search of it is slow.
      const made = await send(t.baseUrl, 'POST', '/api/dataset', org(t, t.ownerKey), json({ dataset_name: `slashes-${Date.now()}-${Math.random()}` }));
      if (made.status !== 200) return made;
      const id = (JSON.parse(made.text) as { id: string }).id;
      const url = `http://127.0.0.1:9/${'/'.repeat(60_000)}`;
      const updated = await send(t.baseUrl, 'PUT', '/api/dataset', org(t, t.ownerKey), json({ dataset_id: id, server_configuration: { RERANKER_BASE_URL: url } }));
      if (updated.status === 200) {
        await send(t.baseUrl, 'POST', '/api/chunk/search', { authorization: t.readKey, 'tr-dataset': id }, json({ query: 'a', search_type: 'bm25' }));
      }
      return updated;
    },
  },
  {
    name: '100,000 group_tracking_ids on one chunk',
    expect: 'refused',
    maxMs: 3000,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk', ds(t, t.ownerKey), GROUP_IDS()),
  },
  {
    name: 'filter with 500,000 match_any values',
    expect: 'refused',
    maxMs: 5000,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk/search', ds(t, t.readKey), MATCH_ANY()),
  },
  {
    name: 'geo_polygon of 200,000 points',
    expect: 'refused',
    maxMs: 5000,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk/search', ds(t, t.readKey), POLYGON()),
  },
  {
    name: 'query of 1 MB',
    expect: 'refused',
    maxMs: 5000,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk/search', ds(t, t.readKey), LONG_QUERY()),
  },
  {
    name: 'autocomplete of 1 MB',
    expect: 'refused',
    maxMs: 5000,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk/autocomplete', ds(t, t.readKey), LONG_PREFIX()),
  },
  {
    name: 'search with 900 KB of analytics metadata',
    expect: 'bounded',
    maxMs: 3000,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk/search', ds(t, t.readKey), BIG_METADATA()),
  },
  {
    name: 'read key: 10,000 organizations',
    expect: 'refused',
    maxMs: 3000,
    async run(t) {
      // The first refusal ends it; a service that accepts keeps being asked (bounded at 20 here).
      let last: AttackOutcome | undefined;
      for (let i = 0; i < 20; i++) {
        last = await send(t.baseUrl, 'POST', '/api/organization', { authorization: t.readKey }, json({ name: `spam-${i}-${Date.now()}` }));
        if (last.status !== 200) break;
      }
      return last!;
    },
  },
  {
    name: 'read key probes the other tenant\'s dataset',
    expect: 'refused',
    maxMs: 3000,
    run: (t) => send(t.baseUrl, 'POST', '/api/chunk/search', { authorization: t.readKey, 'tr-dataset': t.victim.datasetId }, json({ query: 'alpha', search_type: 'bm25' })),
    check: (o, t) => (o.text.includes(t.victim.orgId) ? 'the answer names the organization that owns the dataset' : null),
  },
  {
    name: 'slow searches racing writes',
    expect: 'bounded',
    maxMs: 20_000,
    async run(t) {
      // Many-word queries with wide filters, while the same tenant writes and deletes chunks.
      const words = Array.from({ length: 60 }, (_, i) => `w${i} alpha beta gamma`).join(' ');
      const filter = { should: Array.from({ length: 50 }, (_, i) => ({ field: 'tag_set', match_any: Array.from({ length: 50 }, (_, j) => `t${i}-${j}`) })) };
      const searches = Array.from({ length: 6 }, () =>
        send(t.baseUrl, 'POST', '/api/chunk/search', ds(t, t.readKey), json({ query: words, search_type: 'fulltext', filters: filter, page_size: 100, get_total_pages: true })),
      );
      const writes = Array.from({ length: 3 }, (_, w) =>
        send(
          t.baseUrl,
          'POST',
          '/api/chunk',
          ds(t, t.ownerKey),
          json(Array.from({ length: 100 }, (_, i) => ({ chunk_html: `alpha beta ${w} ${i} ${words.slice(0, 200)}`, tag_set: [`t${i % 50}-${w}`] }))),
        ),
      );
      const all = await Promise.all([...searches, ...writes]);
      // The worst of them speaks for the attack.
      return all.reduce((worst, o) => (rank(o) > rank(worst) ? o : worst));
    },
  },
];

/** Orders outcomes from best to worst: 2xx/4xx by time, then 5xx, then resets. */
function rank(o: AttackOutcome): number {
  if (o.status === 'reset') return 3e9;
  if (o.status >= 500 || o.status === 408) return 2e9 + o.ms;
  return o.ms;
}

/** Why an outcome is wrong for its attack (its answer or its time), or null when the service answered as it should. */
export function judge(attack: Attack, o: AttackOutcome, t: AttackTarget): string | null {
  if (o.ms > attack.maxMs) return `took ${Math.round(o.ms)} ms (bound ${attack.maxMs} ms), status ${o.status}`;
  return judgeAnswer(attack, o, t);
}

/** Why an outcome's answer (status, message, content) is wrong for its attack, whatever it took; null when right. */
export function judgeAnswer(attack: Attack, o: AttackOutcome, t: AttackTarget): string | null {
  const extra = attack.check?.(o, t) ?? null;
  if (extra) return extra;
  if (o.status === 'reset') return attack.resetOk ? null : 'the connection was reset instead of an answer';
  if (o.status >= 500 || o.status === 408) return `answered ${o.status}: ${o.text.slice(0, 200)}`;
  if (o.status >= 400 && o.message === undefined) return `a ${o.status} without a {"message"} body: ${o.text.slice(0, 200)}`;
  if (attack.expect === 'refused' && (o.status < 400 || o.status >= 500)) return `expected a 4xx refusal, got ${o.status}`;
  return null;
}
