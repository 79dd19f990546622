/**
 * Short completions the facade asks of the dataset's model itself (a topic's name, suggested
 * queries): a few dozen tokens, not worth a job and a stream. Bounded in time
 * (QUARRY_LLM_TIMEOUT_MS, QUARRY_LLM_MAX_RETRIES, as the job workers' answers), cancelled when
 * the client goes away, and any provider failure is the caller's 400 (as in the reference).
 */
import type { Context } from 'koa';
import { badRequest, QuarryError } from '../../core/domain/errors.js';
import type { Config } from '../../core/config.js';
import { llmSpec } from '../../core/domain/dataset-config.js';
import type { GenerationOptions } from '../../core/domain/rag.js';
import type { DatasetRecord } from '../../core/domain/tenancy.js';
import { createProvider, type LlmProvider } from '../../core/llm/provider.js';
import { DEFAULT_LLM_CHOICES } from '../schemas/message.js';
import { generationOptions } from './conversation.js';

/** What a short completion runs with. */
export interface ShortCompletion {
  readonly provider: LlmProvider;
  readonly options: GenerationOptions;
  readonly signal: AbortSignal;
}

/**
 * Runs `run` with the dataset's provider and default options; a failure of the provider becomes
 * a 400 `<what>: <reason>`, a client that went away a 499.
 */
export async function shortCompletion<T>(
  ctx: Context,
  config: Pick<Config, 'llmTimeoutMs' | 'llmMaxRetries'>,
  dataset: DatasetRecord,
  what: string,
  run: (c: ShortCompletion) => Promise<T>,
): Promise<T> {
  const settings = dataset.serverConfiguration;
  const closed = new AbortController();
  const onClose = (): void => {
    if (!ctx.res.writableFinished) closed.abort(new QuarryError('cancelled', 'the client closed the connection before the response'));
  };
  ctx.res.once('close', onClose);
  const signal = AbortSignal.any([closed.signal, AbortSignal.timeout(config.llmTimeoutMs)]);
  try {
    const provider = createProvider(llmSpec(settings).endpoint, { timeoutMs: config.llmTimeoutMs, maxRetries: config.llmMaxRetries });
    return await run({ provider, options: generationOptions(settings, DEFAULT_LLM_CHOICES, null), signal });
  } catch (err) {
    if (closed.signal.aborted) throw new QuarryError('cancelled', 'the client closed the connection before the response');
    if (err instanceof QuarryError) throw badRequest(`${what}: ${err.message}`);
    if (signal.aborted) throw badRequest(`${what}: the model did not answer within ${config.llmTimeoutMs} ms`);
    throw err;
  } finally {
    ctx.res.off('close', onClose);
  }
}
