/**
 * The engine's `Cancel` (Ctrl-C in `pulumi up`) reaches the long waits of a step through the
 * context's `signal`: a wait returns early when it is aborted, and the step then fails the way its
 * own deadline would have failed it, with words saying it was cancelled. That deadline's failure is
 * the one the next `up` already finishes from (a knowledge base's create is adopted by its marker
 * and waited for again; a verification waits for the same test calls, none placed again), so a
 * cancelled step leaves nothing that `up` cannot finish.
 */
import { setTimeout as sleep } from "node:timers/promises";

/** What a failure says when the engine cancelled the step. */
export const CANCELLED = "cancelled by the Pulumi engine (Ctrl-C, or the deployment stopping)";

/**
 * Waits `ms` (with `wait`, the timer by default), or less when `signal` is aborted first; resolves
 * either way (the caller asks `signal.aborted`).
 */
export async function pauseUnlessCancelled(
  ms: number,
  signal: AbortSignal | undefined,
  wait: (ms: number) => Promise<unknown> = sleep,
): Promise<void> {
  if (!signal) {
    await wait(ms);
    return;
  }
  if (signal.aborted) return;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<void>((resolve) => {
    onAbort = () => resolve();
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    await Promise.race([wait(ms), aborted]);
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}
