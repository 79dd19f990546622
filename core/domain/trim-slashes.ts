/**
 * Trailing-slash trimming of model-server URLs, in one backward pass. `.replace(/\/+$/, '')` is
 * quadratic on a long run of slashes not at the end (it retries from every slash of the run):
 * 60,000 slashes in one RERANKER_BASE_URL made every search of that dataset take 3.2 s.
 */

/** `s` without the slashes it ends with. */
export function trimTrailingSlashes(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 47 /* / */) end--;
  return end === s.length ? s : s.slice(0, end);
}
