/** The heap a process retains, as the memory benches measure it (run node with --expose-gc). */

const gc = (globalThis as { gc?: () => void }).gc;

/** Whether node runs with --expose-gc (without it, {@link retainedHeap} counts garbage too). */
export const canCollect = gc !== undefined;

/** Heap used + array buffers after two full collections (typed arrays' stores are array buffers, outside the heap). */
export function retainedHeap(): number {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
