/**
 * A topic message's answer on the wire: `<JSON chunks>||<completion>` or, with
 * `completion_first`, `<completion>||<JSON chunks>`; streamed as raw UTF-8 text (chunked body,
 * the reference sends no SSE framing) or, with `stream_response: false`, as one JSON string.
 * The answer is stored (`complete`) before the body ends, so a client that reads the topic
 * after the last byte sees it; an answer that fails or whose client leaves is not stored. Like
 * facade/rag/send-answer.ts, the request gives its tenant-fairness turn back once the answer is
 * enqueued; unlike it, the chunks may depend on the completion (only_include_docs_used) and the
 * answer is stored before the body ends.
 */
import type { ParameterizedContext } from 'koa';
import { QuarryError } from '../../core/domain/errors.js';
import type { TokenUsage } from '../../core/domain/rag.js';
import type { RequestState } from '../context.js';
import type { Answer } from './answer.js';
import { combined, SEPARATOR } from './conversation.js';
import { rawBody } from './raw-body.js';
import { errorLine } from './send-answer.js';

/** How one message answer is written. */
export interface MessageAnswer {
  readonly stream: boolean;
  readonly completionFirst: boolean;
  /** The chunks' JSON when it is known before the answer; null: only once the answer is complete. */
  readonly chunksBefore: string | null;
  /** The chunks' JSON for a complete answer. */
  chunksAfter(completion: string): string;
  /** Stores the complete answer (and records it); runs before the body ends. */
  complete(completion: string, usage: TokenUsage): Promise<void>;
}

const asQuarryError = (err: unknown): QuarryError =>
  err instanceof QuarryError ? err : new QuarryError('unavailable', `the answer failed: ${(err as Error).message}`, { cause: err });

/**
 * Writes `answer` (started with `gone`, the signal of the client going away, which also cancels
 * it) to the response. A failure before any text is thrown: the route's status and `{message}`.
 */
export async function writeMessageAnswer(ctx: ParameterizedContext<RequestState>, answer: Answer, gone: AbortSignal, m: MessageAnswer): Promise<void> {
  // From here the request only waits for the job worker: its organization's turn goes to the next request.
  ctx.state.yieldTurn?.();
  ctx.set('TR-QueryID', answer.id);
  const deltas = answer.deltas()[Symbol.asyncIterator]();
  if (!m.stream) {
    let completion = '';
    try {
      for (let d = await deltas.next(); !d.done; d = await deltas.next()) completion += d.value;
      const usage = await answer.usage;
      await m.complete(completion, usage);
    } catch (err) {
      throw asQuarryError(err);
    }
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(combined(m.chunksAfter(completion), completion, m.completionFirst));
    return;
  }
  // The first delta (or the failure) decides the status: a provider that refuses is a 400 with nothing written.
  let first: IteratorResult<string>;
  try {
    first = await deltas.next();
  } catch (err) {
    throw asQuarryError(err);
  }
  const out = rawBody(ctx);
  const write = out.write;
  // Chunks first, whose JSON depends on the answer (only_include_docs_used): everything at the end.
  const buffered = !m.completionFirst && m.chunksBefore === null;
  void (async () => {
    let completion = '';
    try {
      if (!m.completionFirst && m.chunksBefore !== null) write(m.chunksBefore + SEPARATOR);
      for (let d = first; !d.done; d = await deltas.next()) {
        completion += d.value;
        if (!buffered) write(d.value);
      }
      const usage = await answer.usage;
      if (gone.aborted) return;
      await m.complete(completion, usage);
      if (buffered) write(combined(m.chunksAfter(completion), completion, false));
      else if (m.completionFirst) write(SEPARATOR + m.chunksAfter(completion));
    } catch (err) {
      // Text has gone out with a 200: the body ends with a line that says what happened.
      write(errorLine(asQuarryError(err)));
    } finally {
      out.end();
    }
  })();
}
