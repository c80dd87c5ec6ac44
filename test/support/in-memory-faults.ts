import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Storage faults queued for an in-memory double, as Pulsar's tests inject them
 * into their in-memory BookKeeper: `failNext('append', error)` makes the next
 * `append` reject with exactly `error`, before it changes anything (the store
 * refused the write). Faults are one-shot and queue per operation.
 */
export class InjectedFaults<Operation extends string> {
  private readonly pending = new Map<Operation, Error[]>();

  failNext(operation: Operation, error: Error): void {
    const queue = this.pending.get(operation) ?? [];
    queue.push(error);
    this.pending.set(operation, queue);
  }

  /**
   * Starts one operation: gives other callers a turn first (so concurrent
   * calls interleave as they would over the network), then throws the fault
   * queued for `operation`, if any. Everything after it runs without a pause,
   * which makes each operation of a fake atomic.
   */
  async enter(operation: Operation): Promise<void> {
    await nextTurn();
    const fault = this.pending.get(operation)?.shift();
    if (fault !== undefined) throw fault;
  }
}

/** Orders strings by their UTF-8 bytes, as DynamoDB orders string sort keys. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
