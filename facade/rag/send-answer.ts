/**
 * Writes a RAG answer to a Koa response. Streaming: raw UTF-8 text deltas in a chunked body,
 * committed at the answer's first event, so an answer the provider refuses before any text is
 * still a proper status with `{message}`; an error after text went out ends the body with a
 * line `\n\n[error: <message>]` (never a hang, never a silent truncation). Not streaming: the
 * whole text as one JSON string, or the error's status. Either way with an optional prefix and
 * suffix (a topic message sends its chunks before or after the completion).
 *
 * A request that holds a tenant-fairness turn (a topic message; `POST /api/chunk/generate` runs
 * side by side and holds none) gives it back as soon as the answer is enqueued (it only waits on
 * the job worker from then on), and a streamed response is written to the socket directly
 * (`raw-body.ts`) once committed: the route returns then, while tokens trickle in for a minute.
 */
import type { ParameterizedContext } from 'koa';
import { QuarryError } from '../../core/domain/errors.js';
import type { TokenUsage } from '../../core/domain/rag.js';
import type { RequestState } from '../context.js';
import type { Answer } from './answer.js';
import { rawBody } from './raw-body.js';

/** How an answer ended: complete with its usage, or cut by an error after part of its text. */
export type AnswerOutcome =
  | { readonly complete: true; readonly text: string; readonly usage: TokenUsage }
  | { readonly complete: false; readonly text: string; readonly error: QuarryError };

/** Options of {@link sendAnswer}. */
export interface SendAnswerOptions {
  /** Stream the deltas (`stream_response`), or answer one JSON string at the end. */
  readonly stream: boolean;
  /** Sent before the completion. */
  readonly prefix?: string;
  /** Sent after the completion (only when it completed). */
  readonly suffix?: string;
}

/** What {@link sendAnswer} resolves with once the response is committed. */
export interface SentAnswer {
  /** Resolves (never rejects) when the answer ended and the body was finished. */
  readonly finished: Promise<AnswerOutcome>;
}

/** A signal aborted when the request's client goes away before its response is finished. */
export function clientGone(ctx: ParameterizedContext): AbortSignal {
  const ctl = new AbortController();
  const res = ctx.res;
  res.once('close', () => {
    if (!res.writableFinished) ctl.abort(new QuarryError('cancelled', 'the client closed the connection before the answer ended'));
  });
  return ctl.signal;
}

const asQuarryError = (err: unknown): QuarryError =>
  err instanceof QuarryError ? err : new QuarryError('unavailable', `the answer failed: ${(err as Error).message}`, { cause: err });

/** The line that ends a streamed answer cut by an error. */
export const errorLine = (error: QuarryError): string => `\n\n[error: ${error.message}]`;

/**
 * Sends `answer` on `ctx` (sets `TR-QueryID`). Resolves when the response is committed: for a
 * stream at its first event, else at the answer's end. Rejects with the QuarryError of an answer
 * that failed before any text (streaming) or at all (not streaming): the route's status.
 */
export async function sendAnswer(ctx: ParameterizedContext<RequestState>, answer: Answer, options: SendAnswerOptions): Promise<SentAnswer> {
  const prefix = options.prefix ?? '';
  const suffix = options.suffix ?? '';
  // From here the request only waits for the job worker: its organization's turn, if it holds
  // one, goes to the next request (held, 100 answers of one organization started one first token
  // at a time: ~3 s each).
  ctx.state.yieldTurn?.();
  ctx.set('TR-QueryID', answer.id);
  const res = ctx.res;
  const onClose = (): void => {
    if (!res.writableFinished) void answer.cancel();
  };
  res.once('close', onClose);
  const it = answer.deltas()[Symbol.asyncIterator]();

  if (!options.stream) {
    let text = '';
    try {
      for (let r = await it.next(); !r.done; r = await it.next()) text += r.value;
      const usage = await answer.usage;
      ctx.type = 'application/json';
      ctx.body = JSON.stringify(prefix + text + suffix);
      return { finished: Promise.resolve({ complete: true, text, usage }) };
    } catch (err) {
      throw asQuarryError(err);
    } finally {
      res.off('close', onClose);
    }
  }

  // The first event decides the status: text (200, streamed) or an error before any (its status).
  let first: IteratorResult<string>;
  try {
    first = await it.next();
  } catch (err) {
    res.off('close', onClose);
    throw asQuarryError(err);
  }
  const body = rawBody(ctx);
  const write = body.write;
  write(prefix);
  const finished = (async (): Promise<AnswerOutcome> => {
    let text = '';
    try {
      for (let r = first; !r.done; r = await it.next()) {
        text += r.value;
        write(r.value);
      }
      const usage = await answer.usage;
      write(suffix);
      return { complete: true, text, usage };
    } catch (err) {
      const error = asQuarryError(err);
      write(errorLine(error));
      return { complete: false, text, error };
    } finally {
      body.end();
      res.off('close', onClose);
    }
  })();
  return { finished };
}
