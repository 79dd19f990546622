/**
 * A tiny but valid GGUF language model for tests that really run llama.cpp (no model can be
 * downloaded here): the `llama` architecture with one layer and 32-wide embeddings, a
 * SentencePiece ("llama") vocabulary with byte fallback (`<0x00>`..`<0xFF>`, so any prompt
 * tokenizes), ChatML control tokens and the ChatML chat template, and F32 weights drawn from a
 * seeded generator. What llama.cpp requires was read from its sources (`src/llama-model.cpp`
 * `load_hparams`, `src/models/llama.cpp` `load_arch_tensors`, `src/llama-vocab.cpp` `load`) as
 * bundled by node-llama-cpp 3.22.1.
 *
 * The weights are random, but shaped so that the answer is always made of whole words: every
 * token embedding carries a large constant in dimension 0, which no layer writes to (row 0 of
 * the attention output and FFN down projections is zero), so after the final RMS norm dimension
 * 0 is always large and positive; the output row of every token that is not a word (control,
 * byte, single letter) weighs dimension 0 strongly negative, so those tokens are never sampled.
 * The model never ends an answer by itself (end-of-text is never sampled either): generation
 * stops at max_tokens, a stop string, or an abort, which is what the tests need.
 */
import { writeFileSync } from 'node:fs';
import { rng } from './random-corpus.js';

/** Words the tiny model answers with (each a token `▁word`). */
export const TINY_WORDS = [
  'the', 'answer', 'is', 'in', 'document', 'ducks', 'quack', 'geese', 'honk', 'swans', 'glide', 'on', 'lakes',
  'search', 'quarry', 'model', 'tiny', 'text', 'and', 'of', 'a', 'to', 'it', 'yes', 'no',
] as const;

/** Shape of the generated model. */
export interface TinyGgufOptions {
  /** Seed of the weights. @defaultValue 1 */
  readonly seed?: number;
  /** Context length the model declares, in tokens. @defaultValue 4096 */
  readonly contextLength?: number;
}

const GGUF_MAGIC = 0x46554747; // "GGUF" little-endian
const GGUF_VERSION = 3;
const ALIGNMENT = 32;

/** GGUF value types (ggml/include/gguf.h). */
const T = { UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9 } as const;
/** llama_token_type values of `tokenizer.ggml.token_type`. */
const TOKEN = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, BYTE: 6 } as const;
const GGML_TYPE_F32 = 0;

const N_EMBD = 32;
const N_HEAD = 2;
const N_FF = 64;
const N_LAYER = 1;
/** Dimension 0 of every embedding: dominates the final norm (see the module comment). */
const ANCHOR = 4;
/** Weight of dimension 0 in the output row of a token the model must never produce. */
const NEVER = -12;

/** The ChatML template (as Qwen and others ship it): node-llama-cpp recognizes it as ChatML. */
const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";


interface Vocab {
  readonly tokens: string[];
  readonly scores: number[];
  readonly types: number[];
  /** Whether the model may produce the token. */
  readonly speakable: boolean[];
}

function vocab(): Vocab {
  const v: Vocab = { tokens: [], scores: [], types: [], speakable: [] };
  const add = (text: string, type: number, score: number, speakable = false): void => {
    v.tokens.push(text);
    v.types.push(type);
    v.scores.push(score);
    v.speakable.push(speakable);
  };
  // llama.cpp's SPM defaults: unk 0, bos 1, eos 2.
  add('<unk>', TOKEN.UNKNOWN, 0);
  add('<s>', TOKEN.CONTROL, 0);
  add('</s>', TOKEN.CONTROL, 0);
  add('<|im_start|>', TOKEN.CONTROL, 0);
  add('<|im_end|>', TOKEN.CONTROL, 0);
  for (let b = 0; b < 256; b++) add(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`, TOKEN.BYTE, 0);
  // Single characters, so that prompts tokenize mostly without byte fallback.
  add('\u2581', TOKEN.NORMAL, -1);
  for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789') add(c, TOKEN.NORMAL, -2);
  for (const c of '.,:;?!\'"()[]{}<>=-_/') add(c, TOKEN.NORMAL, -3);
  for (const w of TINY_WORDS) add(`\u2581${w}`, TOKEN.NORMAL, -5, true);
  add('\u2581.', TOKEN.NORMAL, -6, true);
  return v;
}

/** Serializes GGUF values into growing chunks. */
class Writer {
  private readonly parts: Buffer[] = [];
  length = 0;

  private push(b: Buffer): void {
    this.parts.push(b);
    this.length += b.length;
  }
  u32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    this.push(b);
  }
  i32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    this.push(b);
  }
  u64(n: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    this.push(b);
  }
  f32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(n);
    this.push(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.push(b);
  }
  bytes(b: Buffer): void {
    this.push(b);
  }
  pad(): void {
    const rem = this.length % ALIGNMENT;
    if (rem !== 0) this.push(Buffer.alloc(ALIGNMENT - rem));
  }
  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

type Kv =
  | { k: string; t: 'u32'; v: number }
  | { k: string; t: 'f32'; v: number }
  | { k: string; t: 'bool'; v: boolean }
  | { k: string; t: 'str'; v: string }
  | { k: string; t: 'strs'; v: readonly string[] }
  | { k: string; t: 'f32s'; v: readonly number[] }
  | { k: string; t: 'i32s'; v: readonly number[] };

function writeKv(w: Writer, kv: Kv): void {
  w.str(kv.k);
  switch (kv.t) {
    case 'u32':
      w.u32(T.UINT32);
      w.u32(kv.v);
      return;
    case 'f32':
      w.u32(T.FLOAT32);
      w.f32(kv.v);
      return;
    case 'bool':
      w.u32(T.BOOL);
      w.bytes(Buffer.from([kv.v ? 1 : 0]));
      return;
    case 'str':
      w.u32(T.STRING);
      w.str(kv.v);
      return;
    case 'strs':
      w.u32(T.ARRAY);
      w.u32(T.STRING);
      w.u64(kv.v.length);
      for (const s of kv.v) w.str(s);
      return;
    case 'f32s':
      w.u32(T.ARRAY);
      w.u32(T.FLOAT32);
      w.u64(kv.v.length);
      for (const x of kv.v) w.f32(x);
      return;
    case 'i32s':
      w.u32(T.ARRAY);
      w.u32(T.INT32);
      w.u64(kv.v.length);
      for (const x of kv.v) w.i32(x);
      return;
  }
}

/** A tensor: ggml dimensions (ne[0] first, the contiguous one) and its F32 values. */
interface Tensor {
  readonly name: string;
  readonly dims: readonly number[];
  readonly data: Float32Array;
}

/** A [cols x rows] matrix (ne = [cols, rows]) of uniform values in ±scale, rows in `zeroRows` all zero. */
function matrix(next: () => number, cols: number, rows: number, scale: number, zeroRows: readonly number[] = []): Float32Array {
  const m = new Float32Array(cols * rows);
  for (let i = 0; i < m.length; i++) m[i] = (next() * 2 - 1) * scale;
  for (const r of zeroRows) m.fill(0, r * cols, (r + 1) * cols);
  return m;
}

/** The bytes of a tiny llama GGUF (see the module comment). */
export function tinyGguf(options: TinyGgufOptions = {}): Buffer {
  const next = rng(options.seed ?? 1);
  const v = vocab();
  const nVocab = v.tokens.length;
  const headDim = N_EMBD / N_HEAD;

  const embd = matrix(next, N_EMBD, nVocab, 0.5);
  for (let t = 0; t < nVocab; t++) embd[t * N_EMBD] = ANCHOR;
  const output = matrix(next, N_EMBD, nVocab, 3);
  for (let t = 0; t < nVocab; t++) output[t * N_EMBD] = v.speakable[t] ? 0 : NEVER;
  const ones = (n: number): Float32Array => new Float32Array(n).fill(1);

  const tensors: Tensor[] = [
    { name: 'token_embd.weight', dims: [N_EMBD, nVocab], data: embd },
    { name: 'output_norm.weight', dims: [N_EMBD], data: ones(N_EMBD) },
    { name: 'output.weight', dims: [N_EMBD, nVocab], data: output },
  ];
  for (let i = 0; i < N_LAYER; i++) {
    tensors.push(
      { name: `blk.${i}.attn_norm.weight`, dims: [N_EMBD], data: ones(N_EMBD) },
      { name: `blk.${i}.attn_q.weight`, dims: [N_EMBD, N_EMBD], data: matrix(next, N_EMBD, N_EMBD, 0.3) },
      { name: `blk.${i}.attn_k.weight`, dims: [N_EMBD, N_EMBD], data: matrix(next, N_EMBD, N_EMBD, 0.3) },
      { name: `blk.${i}.attn_v.weight`, dims: [N_EMBD, N_EMBD], data: matrix(next, N_EMBD, N_EMBD, 0.3) },
      // Row 0 zero: the layer never changes dimension 0 of the residual stream.
      { name: `blk.${i}.attn_output.weight`, dims: [N_EMBD, N_EMBD], data: matrix(next, N_EMBD, N_EMBD, 0.2, [0]) },
      { name: `blk.${i}.ffn_norm.weight`, dims: [N_EMBD], data: ones(N_EMBD) },
      { name: `blk.${i}.ffn_gate.weight`, dims: [N_EMBD, N_FF], data: matrix(next, N_EMBD, N_FF, 0.3) },
      { name: `blk.${i}.ffn_up.weight`, dims: [N_EMBD, N_FF], data: matrix(next, N_EMBD, N_FF, 0.3) },
      { name: `blk.${i}.ffn_down.weight`, dims: [N_FF, N_EMBD], data: matrix(next, N_FF, N_EMBD, 0.2, [0]) },
    );
  }

  const kvs: Kv[] = [
    { k: 'general.architecture', t: 'str', v: 'llama' },
    { k: 'general.name', t: 'str', v: 'quarry tiny test model' },
    { k: 'general.file_type', t: 'u32', v: 0 },
    { k: 'general.alignment', t: 'u32', v: ALIGNMENT },
    { k: 'llama.context_length', t: 'u32', v: options.contextLength ?? 4096 },
    { k: 'llama.embedding_length', t: 'u32', v: N_EMBD },
    { k: 'llama.block_count', t: 'u32', v: N_LAYER },
    { k: 'llama.feed_forward_length', t: 'u32', v: N_FF },
    { k: 'llama.attention.head_count', t: 'u32', v: N_HEAD },
    { k: 'llama.attention.head_count_kv', t: 'u32', v: N_HEAD },
    { k: 'llama.attention.layer_norm_rms_epsilon', t: 'f32', v: 1e-5 },
    { k: 'llama.rope.dimension_count', t: 'u32', v: headDim },
    { k: 'llama.vocab_size', t: 'u32', v: nVocab },
    { k: 'tokenizer.ggml.model', t: 'str', v: 'llama' },
    { k: 'tokenizer.ggml.tokens', t: 'strs', v: v.tokens },
    { k: 'tokenizer.ggml.scores', t: 'f32s', v: v.scores },
    { k: 'tokenizer.ggml.token_type', t: 'i32s', v: v.types },
    { k: 'tokenizer.ggml.unknown_token_id', t: 'u32', v: 0 },
    { k: 'tokenizer.ggml.bos_token_id', t: 'u32', v: 1 },
    { k: 'tokenizer.ggml.eos_token_id', t: 'u32', v: 2 },
    { k: 'tokenizer.ggml.add_bos_token', t: 'bool', v: true },
    { k: 'tokenizer.ggml.add_eos_token', t: 'bool', v: false },
    { k: 'tokenizer.chat_template', t: 'str', v: CHATML_TEMPLATE },
  ];

  const w = new Writer();
  w.u32(GGUF_MAGIC);
  w.u32(GGUF_VERSION);
  w.u64(tensors.length);
  w.u64(kvs.length);
  for (const kv of kvs) writeKv(w, kv);
  let offset = 0;
  for (const t of tensors) {
    w.str(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(GGML_TYPE_F32);
    w.u64(offset);
    offset += Math.ceil((t.data.length * 4) / ALIGNMENT) * ALIGNMENT;
  }
  w.pad();
  for (const t of tensors) {
    w.bytes(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    w.pad();
  }
  return w.done();
}

/** Writes {@link tinyGguf} to `file` and returns the path. */
export function writeTinyGguf(file: string, options: TinyGgufOptions = {}): string {
  writeFileSync(file, tinyGguf(options));
  return file;
}
