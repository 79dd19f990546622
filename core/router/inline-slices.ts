/**
 * How an inline shard takes a batch of documents: a slice at a time, each small enough that the
 * event loop it shares with every other request is free again within a few ms.
 */

/**
 * Text per slice (UTF-16 units): 16 KB takes 2-4 ms to index here, and about as long to count
 * into a typo vocabulary. One 2,000-entry apply in one task held the loop for hundreds of ms, and
 * 1,000 SciFact chunks counted into a vocabulary at once 240-460 ms.
 */
export const INLINE_SLICE_TEXT = 16_384;
/** ...and at most this many documents (short chunks still cost their fields and filters). */
export const INLINE_SLICE_DOCS = 64;

/** Where the slice of `docs` that starts at `start` ends (exclusive): at least one document, else {@link INLINE_SLICE_TEXT} of text or {@link INLINE_SLICE_DOCS} documents. */
export function sliceEnd(docs: readonly { readonly text: string }[], start: number): number {
  let end = start;
  let text = 0;
  while (end < docs.length && (end === start || (text < INLINE_SLICE_TEXT && end - start < INLINE_SLICE_DOCS))) text += docs[end++]!.text.length;
  return end;
}

/** Resolves in a later turn of the event loop: the requests that waited run first. */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
