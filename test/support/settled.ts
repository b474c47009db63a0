/**
 * `p` in a box, once it has settled, for `expect(…).rejects` / `.resolves`: Bun's matchers wait for
 * a pending promise without delivering worker messages (Bun 1.4.5), so one that needs an answer of
 * the embedded store's thread (store/pglite-worker.ts) would never settle there. Usage:
 * `await expect((await settled(promise)).promise).rejects.toThrow()`.
 */
export const settled = async <T>(p: Promise<T>): Promise<{ promise: Promise<T> }> => {
  const [r] = await Promise.allSettled([p]);
  const promise = r?.status === 'fulfilled' ? Promise.resolve(r.value) : Promise.reject(r?.reason);
  // Handled here: the matcher reads it at once.
  promise.catch(() => undefined);
  return { promise };
};
