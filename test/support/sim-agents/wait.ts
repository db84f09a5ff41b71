/** Polling waits for tests on asynchronous simulated agents. */

/**
 * Resolves with the first truthy value `check` returns, polling every `intervalMs` (default 10 ms);
 * rejects after `timeoutMs` (default 5 s) with `message` and the last value seen.
 */
export async function waitUntil<T>(
  check: () => T | undefined | null | false,
  options: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 5000);
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) {
      throw new Error(`${options.message ?? "condition"} not met within ${options.timeoutMs ?? 5000} ms`);
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 10));
  }
}

/**
 * Resolves with the first result of `attempt` that does not throw, retrying every `intervalMs`
 * (default 50 ms); rejects with the last error after `timeoutMs` (default 5 s).
 */
export async function eventually<T>(
  attempt: () => Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 5000);
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, options.intervalMs ?? 50));
    }
  }
}
