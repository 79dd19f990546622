/** The environment defaults every quarry process is started with: filled in where unset, the operator's own kept. */
import { describe, expect, it } from 'vitest';
import { PROCESS_ENV_DEFAULTS, withProcessDefaults } from '../../core/process-env.js';

describe('withProcessDefaults', () => {
  it('adds each default the environment lacks (or has empty) and keeps everything else', () => {
    const env = withProcessDefaults({ PATH: '/bin', MALLOC_MMAP_THRESHOLD_: '' });
    expect(env.PATH).toBe('/bin');
    for (const [name, value] of Object.entries(PROCESS_ENV_DEFAULTS)) expect(env[name]).toBe(value);
  });

  it("keeps the operator's own value and leaves the given object as it was", () => {
    const given = { MALLOC_MMAP_THRESHOLD_: '1048576' };
    const env = withProcessDefaults(given);
    expect(env.MALLOC_MMAP_THRESHOLD_).toBe('1048576');
    expect(given).toEqual({ MALLOC_MMAP_THRESHOLD_: '1048576' });
  });
});
