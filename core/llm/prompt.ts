/**
 * The chat messages sent to an OpenAI-compatible endpoint for one answer (wire-format 5.6). Two
 * shapes, as the reference has them: chosen chunks (`/api/chunk/generate`) give each document a
 * user message of its own and end with RAG_PROMPT + the question; a topic's chat
 * (`/api/message`) puts the question, RAG_PROMPT and the documents as JSON in one message.
 */
import type { ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ChatMessage, GenerationRequest, RagDoc } from '../domain/rag.js';

/** Caption of the message that carries the images the caller attached to the question. */
export const QUESTION_IMAGES_CAPTION = 'These are the images attached to my question:';

/** Python-style single-quoted text, as the reference writes a doc (backslashes and quotes left as they are). */
function quoted(s: string): string {
  return `'${s}'`;
}

/**
 * The text of a chosen-chunks doc message: `{'doc': n, 'text': '...'}`, with `'link': '...'`
 * after the text when links are included. The reference swaps link and text in that case; we
 * put each in its own slot.
 */
export function docMessageText(doc: RagDoc, includeLinks: boolean): string {
  const link = includeLinks ? `, 'link': ${quoted(doc.link ?? '')}` : '';
  return `{'doc': ${doc.n}, 'text': ${quoted(doc.text)}${link}}`;
}

/** Image parts for `urls` (the model fetches them). */
function imageParts(urls: readonly string[]): ChatCompletionContentPart[] {
  return urls.map((url) => ({ type: 'image_url', image_url: { url } }));
}

/** One user message per doc, in doc order; a doc's images ride along as image parts when asked. */
function docMessages(req: GenerationRequest): ChatCompletionMessageParam[] {
  return req.docs.map((doc) => {
    const text = docMessageText(doc, req.includeLinks);
    const images = req.images.use ? doc.imageUrls.slice(0, Math.max(0, req.images.perChunk)) : [];
    if (images.length === 0) return { role: 'user', content: text };
    return { role: 'user', content: [{ type: 'text', text }, ...imageParts(images)] };
  });
}

/** Earlier turns as chat messages, roles and text unchanged. */
function historyMessages(history: readonly ChatMessage[]): ChatCompletionMessageParam[] {
  return history.map((m): ChatCompletionMessageParam => {
    if (m.role === 'system') return { role: 'system', content: m.content };
    if (m.role === 'assistant') return { role: 'assistant', content: m.content };
    return { role: 'user', content: m.content };
  });
}

/** The system prompt, or nothing when it is empty (some servers refuse an empty system message). */
function systemMessages(systemPrompt: string): ChatCompletionMessageParam[] {
  return systemPrompt === '' ? [] : [{ role: 'system', content: systemPrompt }];
}

/** The caption message with the question's images, or nothing when there are none. */
function questionImageMessages(urls: readonly string[]): ChatCompletionMessageParam[] {
  if (urls.length === 0) return [];
  return [{ role: 'user', content: [{ type: 'text', text: QUESTION_IMAGES_CAPTION }, ...imageParts(urls)] }];
}

/** The final user message of chosen chunks: RAG_PROMPT, a space, the question (the question alone when the prompt is empty). */
export function finalPrompt(ragPrompt: string, question: string): string {
  return ragPrompt === '' ? question : `${ragPrompt} ${question}`;
}

/** A doc's num_value in a topic chat: the number, or `"<currency> <number>"` when the message gave a currency. */
const numValueOf = (n: number | null, currency: string | undefined): number | string | null =>
  n !== null && currency !== undefined && currency !== '' ? `${currency} ${n}` : n;

/** A topic chat's docs: one JSON object per doc `{doc, text, num_value, link}`, separated by blank lines. */
export function docsJson(docs: readonly RagDoc[], currency?: string): string {
  return docs.map((d) => JSON.stringify({ doc: d.n, text: d.text, num_value: numValueOf(d.numValue, currency), link: d.link })).join('\n\n');
}

/** The topic chat's one user message: `Here's my prompt: <question>\n\n<RAG_PROMPT> <docs>`. */
export function topicChatPrompt(question: string, ragPrompt: string, docs: readonly RagDoc[], currency?: string): string {
  return `Here's my prompt: ${question}\n\n${ragPrompt} ${docsJson(docs, currency)}`;
}

/**
 * The messages of one answer, in order.
 * - `chosen_chunks`: system, one message per doc, the history, the question's images, then
 *   RAG_PROMPT + ' ' + question.
 * - `all_chunks`: system, the history, the question's images, then the topic chat prompt.
 */
export function buildMessages(req: GenerationRequest): ChatCompletionMessageParam[] {
  if (req.ragType === 'all_chunks') {
    return [
      ...systemMessages(req.systemPrompt),
      ...historyMessages(req.history),
      ...questionImageMessages(req.imageUrls),
      { role: 'user', content: topicChatPrompt(req.question, req.ragPrompt, req.docs, req.currency) },
    ];
  }
  return [
    ...systemMessages(req.systemPrompt),
    ...docMessages(req),
    ...historyMessages(req.history),
    ...questionImageMessages(req.imageUrls),
    { role: 'user', content: finalPrompt(req.ragPrompt, req.question) },
  ];
}

/** Plain chat messages (topic names, suggestions) in the wire shape. */
export function plainMessages(messages: readonly ChatMessage[]): ChatCompletionMessageParam[] {
  return historyMessages(messages);
}

/** All the text of `messages` (for a token estimate when the provider reports no usage). */
export function messagesText(messages: readonly ChatCompletionMessageParam[]): string {
  const out: string[] = [];
  for (const m of messages) {
    if (typeof m.content === 'string') out.push(m.content);
    else if (Array.isArray(m.content)) for (const p of m.content) if (p.type === 'text') out.push(p.text);
  }
  return out.join('\n');
}
