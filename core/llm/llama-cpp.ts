/**
 * The local provider: a GGUF model the operator supplies (`LLM_MODEL_PATH`), run in the job
 * worker's process by llama.cpp through node-llama-cpp, for datasets without LLM_BASE_URL.
 *
 * node-llama-cpp is not a dependency of the package: `deploy/llama.sh install` puts the pinned
 * version with only its prebuilt CPU binary under `<repo>/.llama`, and this module imports it from
 * there at the first answer (its types are restated below, the few members used). It never builds
 * or downloads anything at run time (`build: 'never'`, `skipDownload`).
 *
 * One model per process, loaded at the first answer and shared by every dataset; one context
 * with {@link LocalModelOptions.sequences} sequences. An answer holds a sequence from its first
 * token to its last; answers beyond that wait their turn in arrival order. The prompt is the one
 * the OpenAI-compatible provider sends (`prompt.ts`), rendered by the model's own chat template.
 *
 * Failures: a missing runtime or an unreadable model is `unavailable` (503: the operator's to
 * fix, the detail logged, not shown); a prompt longer than the context is the caller's 400, as
 * an OpenAI server's context-length error is; abort and deadline are `cancelled`/`timeout`.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { QuarryError } from '../domain/errors.js';
import type { ChatMessage, GenerationOptions, GenerationRequest, TokenUsage } from '../domain/rag.js';
import { abortError, providerError, raceAbort, throwIfAborted } from './llm-errors.js';
import { buildMessages, plainMessages } from './prompt.js';
import type { LlmProvider } from './provider.js';

/** The node-llama-cpp version `deploy/llama.sh` installs (and this module's types describe). */
export const NODE_LLAMA_CPP_VERSION = '3.22.1';

/** Directory, in the repository root, that `deploy/llama.sh install` installs into. */
export const LLAMA_INSTALL_DIR = '.llama';

/** What the operator chose for the local model (core/config.ts: LLM_MODEL_PATH, QUARRY_LLM_MODEL_*). */
export interface LocalModelOptions {
  /** Absolute path of the GGUF file. */
  readonly modelPath: string;
  /** CPU threads llama.cpp computes with. @defaultValue `1` */
  readonly threads?: number;
  /** Answers generated at once (context sequences). @defaultValue `1` */
  readonly sequences?: number;
  /** Context of each answer, in tokens (capped at the model's trained context). @defaultValue `8192` */
  readonly contextSize?: number;
  /** Where node-llama-cpp is installed; default: the nearest `.llama` above this module. */
  readonly installDir?: string;
  /** Told the detail of a load failure (the answer's error does not show paths). */
  readonly onLoadError?: (err: unknown) => void;
  /** Told llama.cpp's warnings and errors (default: node-llama-cpp prints them to stderr). */
  readonly onLog?: (level: 'warn' | 'error', message: string) => void;
}

// --- the members of node-llama-cpp used here (see the module comment) ----------------------
type NlcHistoryItem = { type: 'system'; text: string } | { type: 'user'; text: string } | { type: 'model'; response: string[] };
interface NlcTokenizer {
  readonly __tokenizer?: never;
}
interface NlcSequence {
  readonly contextSize: number;
}
interface NlcContext {
  getSequence(): NlcSequence;
  dispose(): Promise<void>;
}
interface NlcModel {
  readonly trainContextSize: number;
  readonly tokenizer: NlcTokenizer;
  createContext(o: { contextSize: { min: number; max: number }; sequences: number; threads: number }): Promise<NlcContext>;
  dispose(): Promise<void>;
}
interface NlcLlama {
  loadModel(o: { modelPath: string; gpuLayers: number }): Promise<NlcModel>;
  dispose(): Promise<void>;
}
interface NlcGenerateOptions {
  readonly maxTokens: number;
  readonly temperature: number;
  readonly customStopTriggers?: string[];
  readonly repeatPenalty: false | { penalty: number; frequencyPenalty: number; presencePenalty: number };
  readonly signal: AbortSignal;
  readonly onTextChunk: (text: string) => void;
  readonly onToken: (tokens: readonly unknown[]) => void;
}
interface NlcChat {
  readonly chatWrapper: { generateContextState(o: { chatHistory: NlcHistoryItem[] }): { contextText: { tokenize(t: NlcTokenizer): readonly unknown[] } } };
  generateResponse(history: NlcHistoryItem[], options: NlcGenerateOptions): Promise<{ metadata: { stopReason: string } }>;
  dispose(o: { disposeSequence: boolean }): void;
}
interface NlcModule {
  getLlama(o: {
    gpu: false;
    build: 'never';
    skipDownload: true;
    usePrebuiltBinaries: true;
    progressLogs: false;
    logLevel: 'warn';
    maxThreads: number;
    logger?: (level: string, message: string) => void;
  }): Promise<NlcLlama>;
  LlamaChat: new (o: { contextSequence: NlcSequence; autoDisposeSequence: boolean }) => NlcChat;
}
// ---------------------------------------------------------------------------------------------

/** Tokens of context kept back for the answer when max_tokens is not given, at least. */
const MIN_ANSWER_TOKENS = 16;

/** The nearest `<dir>/.llama` holding node-llama-cpp, from this module's directory upwards (source and dist/ alike). */
export function findLlamaInstall(from: string = path.dirname(fileURLToPath(import.meta.url))): string | null {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, LLAMA_INSTALL_DIR);
    if (existsSync(path.join(candidate, 'node_modules', 'node-llama-cpp', 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

/** Whether `file` starts with the GGUF magic. */
function isGguf(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head.toString('latin1') === 'GGUF';
  } finally {
    closeSync(fd);
  }
}

/** A load failure the caller sees (no path: that is the operator's, in the log). */
function unavailable(detail: string, cause?: unknown): QuarryError {
  return new QuarryError('unavailable', `the local language model is unavailable: ${detail}`, { cause });
}

/** Earlier and current chat messages as node-llama-cpp's history; image parts are dropped (text models). */
function toHistory(messages: readonly ChatCompletionMessageParam[]): NlcHistoryItem[] {
  const out: NlcHistoryItem[] = [];
  for (const m of messages) {
    const text = typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((p) => (p.type === 'text' ? p.text : '')).join('') : '';
    if (m.role === 'system' || m.role === 'developer') out.push({ type: 'system', text });
    else if (m.role === 'assistant') out.push({ type: 'model', response: [text] });
    else out.push({ type: 'user', text });
  }
  // The model's turn, empty: the chat template renders the generation prompt for it.
  out.push({ type: 'model', response: [] });
  return out;
}

/** A waiter for a free sequence. */
interface Waiter {
  readonly resolve: (s: NlcSequence) => void;
  readonly reject: (e: unknown) => void;
  readonly signal: AbortSignal;
  readonly onAbort: () => void;
}

/** The loaded runtime. */
interface Loaded {
  readonly nlc: NlcModule;
  readonly llama: NlcLlama;
  readonly model: NlcModel;
  readonly context: NlcContext;
}

/**
 * The operator's GGUF model in this process: loaded once at its first use and shared by every
 * answer, with a FIFO queue for its sequences.
 */
export class LocalModel {
  private loading: Promise<Loaded> | null = null;
  private readonly free: NlcSequence[] = [];
  private readonly waiters: Waiter[] = [];
  private closed = false;

  constructor(readonly options: LocalModelOptions) {}

  /**
   * What stops the model from loading, found without loading it (so a job worker can say so at
   * startup): no runtime installed, no file, not a GGUF file. Null: nothing found.
   */
  problem(): string | null {
    const dir = this.installDir();
    if (dir === null || !existsSync(path.join(dir, 'node_modules', 'node-llama-cpp', 'package.json'))) {
      return 'node-llama-cpp is not installed (run ./deploy/llama.sh install)';
    }
    const file = this.options.modelPath;
    try {
      if (!statSync(file).isFile()) return `LLM_MODEL_PATH ${file} is not a file`;
      if (!isGguf(file)) return `LLM_MODEL_PATH ${file} is not a GGUF file`;
    } catch (err) {
      return `LLM_MODEL_PATH ${file} cannot be read: ${(err as Error).message}`;
    }
    return null;
  }

  /** Waits for a free sequence (loading the model first if needed); aborting `signal` leaves the queue at once. */
  async acquire(signal: AbortSignal): Promise<{ sequence: NlcSequence; loaded: Loaded }> {
    const loaded = await raceAbort(this.load(), signal);
    throwIfAborted(signal);
    const ready = this.free.shift();
    if (ready) return { sequence: ready, loaded };
    const sequence = await new Promise<NlcSequence>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(abortError(signal));
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
    return { sequence, loaded };
  }

  /** Hands `sequence` to the first waiter, or back to the free list. */
  release(sequence: NlcSequence): void {
    const next = this.waiters.shift();
    if (!next) {
      this.free.push(sequence);
      return;
    }
    next.signal.removeEventListener('abort', next.onAbort);
    next.resolve(sequence);
  }

  /** Frees the model and the runtime; waiting answers fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) {
      w.signal.removeEventListener('abort', w.onAbort);
      w.reject(unavailable('the job worker is shutting down'));
    }
    const loading = this.loading;
    this.loading = null;
    const loaded = await loading?.catch(() => null);
    if (!loaded) return;
    await loaded.context.dispose().catch(() => {});
    await loaded.model.dispose().catch(() => {});
    await loaded.llama.dispose().catch(() => {});
  }

  private installDir(): string | null {
    return this.options.installDir ?? findLlamaInstall();
  }

  /** The shared load; a failed one is forgotten, so a fixed file or install is picked up by the next answer. */
  private load(): Promise<Loaded> {
    if (this.closed) return Promise.reject(unavailable('the job worker is shutting down'));
    this.loading ??= this.loadOnce().catch((err: unknown) => {
      this.loading = null;
      this.options.onLoadError?.(err);
      throw err instanceof QuarryError ? err : unavailable('the model could not be loaded (see the job worker log)', err);
    });
    return this.loading;
  }

  private async loadOnce(): Promise<Loaded> {
    const problem = this.problem();
    if (problem !== null) throw unavailable(problem.startsWith('LLM_MODEL_PATH') ? 'LLM_MODEL_PATH does not name a readable GGUF file' : problem, new Error(problem));
    const dir = this.installDir()!;
    const entry = createRequire(path.join(dir, 'package.json')).resolve('node-llama-cpp');
    const nlc = (await import(pathToFileURL(entry).href)) as NlcModule;
    const threads = this.options.threads ?? 1;
    const onLog = this.options.onLog;
    const llama = await nlc.getLlama({
      gpu: false,
      build: 'never',
      skipDownload: true,
      usePrebuiltBinaries: true,
      progressLogs: false,
      logLevel: 'warn',
      maxThreads: threads,
      ...(onLog ? { logger: (level: string, message: string) => onLog(level === 'warn' ? 'warn' : 'error', message.trim()) } : {}),
    });
    try {
      const model = await llama.loadModel({ modelPath: this.options.modelPath, gpuLayers: 0 });
      const max = Math.max(1, Math.min(this.options.contextSize ?? 8192, model.trainContextSize));
      const sequences = this.options.sequences ?? 1;
      // min = max: a context smaller than asked (too little memory) is an error, not a surprise.
      const context = await model.createContext({ contextSize: { min: max, max }, sequences, threads });
      for (let i = 0; i < sequences; i++) this.free.push(context.getSequence());
      return { nlc, llama, model, context };
    } catch (err) {
      await llama.dispose().catch(() => {});
      throw err;
    }
  }
}

/** An unbounded single-consumer queue of text deltas fed by callbacks. */
class Deltas {
  private readonly items: string[] = [];
  private wake: (() => void) | null = null;

  push(text: string): void {
    if (text === '') return;
    this.items.push(text);
    this.wake?.();
  }
  /** Takes everything queued. */
  take(): string[] {
    return this.items.splice(0);
  }
  /** Resolves at the next push, or when `other` settles. */
  async next(other: Promise<unknown>): Promise<void> {
    if (this.items.length > 0) return;
    await Promise.race([new Promise<void>((r) => (this.wake = r)), other.then(() => {}, () => {})]);
    this.wake = null;
  }
}

/** The LlmProvider over a {@link LocalModel}. */
export class LlamaCppProvider implements LlmProvider {
  constructor(private readonly model: LocalModel) {}

  async *stream(request: GenerationRequest, signal: AbortSignal): AsyncGenerator<string, TokenUsage, undefined> {
    return yield* this.generate(toHistory(buildMessages(request)), request.options, signal);
  }

  async complete(messages: readonly ChatMessage[], options: GenerationOptions, signal: AbortSignal): Promise<{ text: string; usage: TokenUsage }> {
    const pieces: string[] = [];
    const gen = this.generate(toHistory(plainMessages(messages)), options, signal);
    for (;;) {
      const r = await gen.next();
      if (r.done) return { text: pieces.join(''), usage: r.value };
      pieces.push(r.value);
    }
  }

  private async *generate(history: NlcHistoryItem[], options: GenerationOptions, signal: AbortSignal): AsyncGenerator<string, TokenUsage, undefined> {
    throwIfAborted(signal);
    const { sequence, loaded } = await this.model.acquire(signal);
    // Stops llama.cpp when the caller aborts or stops reading (return() on this generator).
    const stop = new AbortController();
    const upstream = AbortSignal.any([signal, stop.signal]);
    const deltas = new Deltas();
    let completionTokens = 0;
    let chat: NlcChat | null = null;
    let released = false;
    // The sequence goes back once, and only when llama.cpp has stopped using it: tied to the run
    // itself, not to this generator's finally, which never runs if a caller drops the generator.
    const releaseAfter = (done: Promise<unknown>): void => {
      if (released) return;
      released = true;
      const c = chat;
      const back = (): void => {
        c?.dispose({ disposeSequence: false });
        this.model.release(sequence);
      };
      done.then(back, back);
    };
    try {
      chat = new loaded.nlc.LlamaChat({ contextSequence: sequence, autoDisposeSequence: false });
      const promptTokens = chat.chatWrapper.generateContextState({ chatHistory: history }).contextText.tokenize(loaded.model.tokenizer).length;
      const room = sequence.contextSize - promptTokens;
      if (room < (options.maxTokens === undefined ? MIN_ANSWER_TOKENS : 1)) {
        throw providerError(`the prompt has ${promptTokens} tokens; the local model's context holds ${sequence.contextSize}`);
      }
      // node-llama-cpp reads a max of 0 as no max at all.
      if (options.maxTokens === 0) return { promptTokens, completionTokens: 0 };
      const penalties = options.frequencyPenalty !== 0 || options.presencePenalty !== 0;
      const run = chat.generateResponse(history, {
        maxTokens: Math.min(options.maxTokens ?? room, room),
        temperature: options.temperature,
        ...(options.stopTokens.length === 0 ? {} : { customStopTriggers: [...options.stopTokens] }),
        // OpenAI's penalties, without llama.cpp's own repeat penalty (OpenAI has none).
        repeatPenalty: penalties ? { penalty: 1, frequencyPenalty: options.frequencyPenalty, presencePenalty: options.presencePenalty } : false,
        signal: upstream,
        onTextChunk: (text) => deltas.push(text),
        onToken: (tokens) => (completionTokens += tokens.length),
      });
      // Both handlers: a rejection is read below (or, when the caller left, nowhere), never unhandled.
      let settled = false;
      const markSettled = (): void => {
        settled = true;
      };
      run.then(markSettled, markSettled);
      releaseAfter(run);
      for (;;) {
        for (const text of deltas.take()) yield text;
        throwIfAborted(signal);
        if (settled) break;
        await raceAbort(deltas.next(run), signal);
      }
      await run;
      for (const text of deltas.take()) yield text;
      return { promptTokens, completionTokens };
    } catch (err) {
      if (signal.aborted) throw abortError(signal);
      if (err instanceof QuarryError) throw err;
      throw new QuarryError('unavailable', `the local language model failed: ${(err as Error).message}`, { cause: err });
    } finally {
      stop.abort();
      releaseAfter(Promise.resolve());
    }
  }
}
