/** A small fetch wrapper for tests: every call returns status, parsed body and headers. */

/** The outcome of a request. */
export interface ApiResponse<T = any> {
  status: number;
  /** Parsed JSON, the raw text when it is not JSON, or undefined when empty. */
  body: T;
  headers: Headers;
  text: string;
}

/** Options of one request. */
export interface RequestOptions {
  /** JSON-encoded unless `raw` is given. */
  body?: unknown;
  /** A raw body string sent as is (for malformed JSON). */
  raw?: string;
  headers?: Record<string, string | undefined>;
}

/** Sends one request to the stack. */
export async function request<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  opts: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = v;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(baseUrl + path, { method, headers, body, signal: AbortSignal.timeout(20_000) });
  const text = await res.text();
  let parsed: unknown = undefined;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: res.status, body: parsed as T, headers: res.headers, text };
}

/** A client bound to a base URL and default headers. */
export interface Client {
  get<T = any>(path: string, headers?: Record<string, string | undefined>): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string | undefined>): Promise<ApiResponse<T>>;
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string | undefined>): Promise<ApiResponse<T>>;
  del<T = any>(path: string, body?: unknown, headers?: Record<string, string | undefined>): Promise<ApiResponse<T>>;
  req<T = any>(method: string, path: string, opts?: RequestOptions): Promise<ApiResponse<T>>;
  /** The same client with more default headers (undefined removes one). */
  with(headers: Record<string, string | undefined>): Client;
}

/** A client for `baseUrl` sending `defaults` on every request. */
export function client(baseUrl: string, defaults: Record<string, string | undefined> = {}): Client {
  const merge = (h?: Record<string, string | undefined>) => ({ ...defaults, ...h });
  return {
    get: (path, headers) => request(baseUrl, 'GET', path, { headers: merge(headers) }),
    post: (path, body, headers) => request(baseUrl, 'POST', path, { body, headers: merge(headers) }),
    put: (path, body, headers) => request(baseUrl, 'PUT', path, { body, headers: merge(headers) }),
    del: (path, body, headers) => request(baseUrl, 'DELETE', path, { body, headers: merge(headers) }),
    req: (method, path, opts = {}) => request(baseUrl, method, path, { ...opts, headers: merge(opts.headers) }),
    with: (headers) => client(baseUrl, merge(headers)),
  };
}
