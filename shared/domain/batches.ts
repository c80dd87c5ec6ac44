import { ValidationError } from './errors.ts';

/** Limits of one batch request: at most `maxCount` items and `maxBytes` encoded bytes in all. */
export interface BatchLimits {
  readonly maxCount: number;
  readonly maxBytes: number;
}

/** One item is larger than a whole batch may be: the caller must shrink it (or refuse it) first. */
export class BatchItemTooLargeError extends ValidationError {}

/**
 * Splits `items` into consecutive batches that each hold at most
 * `limits.maxCount` items and at most `limits.maxBytes` bytes, where
 * `bytesOf(item)` is the item's encoded size as the service counts it (SQS:
 * the UTF-8 bytes of the body and attributes; DynamoDB: the item size).
 * Greedy: a batch is closed when the next item would not fit, so order is kept
 * and nothing is dropped or repeated. Linear in the number of items; `bytesOf`
 * is called once per item.
 *
 * @example
 * splitIntoBatches(bodies, { maxCount: 10, maxBytes: 1_048_576 }, (body) => Buffer.byteLength(body))
 * @throws BatchItemTooLargeError when one item alone is larger than `maxBytes`.
 * @throws RangeError when a limit is not a positive integer.
 */
export function splitIntoBatches<T>(
  items: readonly T[],
  limits: BatchLimits,
  bytesOf: (item: T) => number,
): T[][] {
  const { maxCount, maxBytes } = limits;
  if (!Number.isSafeInteger(maxCount) || maxCount < 1 || !Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new RangeError(`Batch limits must be positive integers, got ${maxCount} items, ${maxBytes} bytes`);
  }
  const batches: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  items.forEach((item, index) => {
    const size = bytesOf(item);
    if (size > maxBytes) {
      throw new BatchItemTooLargeError(
        `Item ${index} is ${size} bytes; one batch holds at most ${maxBytes} bytes`,
      );
    }
    if (batch.length === maxCount || bytes + size > maxBytes) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += size;
  });
  if (batch.length > 0) batches.push(batch);
  return batches;
}
