/** The local model's variables (LLM_MODEL_PATH, QUARRY_LLM_MODEL_*): defaults, parsing and bounds. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';

describe('loadConfig: the local model', () => {
  it('has no model by default, and one thread, one sequence and 8192 tokens of context', () => {
    expect(loadConfig({})).toMatchObject({ llmModelPath: null, llmModelThreads: 1, llmModelSequences: 1, llmModelContext: 8192 });
    expect(loadConfig({ LLM_MODEL_PATH: '  ' }).llmModelPath).toBeNull();
  });

  it('reads every variable, the model path made absolute', () => {
    const c = loadConfig({ LLM_MODEL_PATH: 'models/m.gguf', QUARRY_LLM_MODEL_THREADS: '4', QUARRY_LLM_MODEL_SEQUENCES: '3', QUARRY_LLM_MODEL_CONTEXT: '2048' });
    expect(c).toMatchObject({ llmModelPath: path.resolve('models/m.gguf'), llmModelThreads: 4, llmModelSequences: 3, llmModelContext: 2048 });
  });

  it.each([
    ['QUARRY_LLM_MODEL_THREADS', '0'],
    ['QUARRY_LLM_MODEL_SEQUENCES', '65'],
    ['QUARRY_LLM_MODEL_CONTEXT', '100'],
    ['QUARRY_LLM_MODEL_THREADS', 'many'],
  ])('refuses %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
