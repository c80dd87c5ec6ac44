import { ConflictError } from '../../domain/errors.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/** Longest a read-modify-write of one cursor may hold it; a crashed holder's lease expires after this. */
export const CURSOR_LEASE_MS = 30_000;
/** How long a caller waits for another holder before answering 409. */
const WAIT_FOR_LEASE_MS = 10_000;
const RETRY_MS = 25;

/**
 * Runs `operation` while holding the cursor's lease, so read-modify-write
 * operations (skip reads the backlog, then acknowledges its first n entries)
 * on one cursor do not interleave and pick the same entries. Individual
 * acknowledgements do not take it: they commute.
 */
export async function withCursorLease<T>(
  ports: UseCasePorts,
  cursorId: string,
  operation: () => Promise<T>,
): Promise<T> {
  const holder = ports.ids.newId();
  const giveUpAt = ports.clock.nowMs() + WAIT_FOR_LEASE_MS;
  for (;;) {
    const now = ports.clock.nowMs();
    if (await ports.cursors.acquireLease(cursorId, holder, now, now + CURSOR_LEASE_MS)) break;
    if (now >= giveUpAt) {
      throw new ConflictError('Another operation is changing this subscription; retry shortly');
    }
    // The deployment's wait (a clock the simulation moves), wall-clock time without one.
    await (ports.sleep ? ports.sleep(RETRY_MS) : new Promise((resolve) => setTimeout(resolve, RETRY_MS)));
  }
  try {
    return await operation();
  } finally {
    await ports.cursors.releaseLease(cursorId, holder);
  }
}
