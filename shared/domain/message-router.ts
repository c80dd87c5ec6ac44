/**
 * Which partition a message goes to, as Pulsar's default router decides:
 * messages with a key go to `signSafeMod(JavaStringHash(key), partitions)` so
 * every message of a key lands on one partition; messages without a key are
 * spread round-robin.
 */

/** Java's `String.hashCode()` over UTF-16 code units: Pulsar's default HashingScheme. */
export function javaStringHash(value: string): number {
  let hash = 0;
  for (let i = 0; i < value.length; i++) {
    hash = (Math.imul(31, hash) + value.charCodeAt(i)) | 0;
  }
  return hash;
}

export function signSafeMod(dividend: number, divisor: number): number {
  const mod = dividend % divisor;
  return mod < 0 ? mod + divisor : Math.abs(mod); // abs: -0 % n is -0
}

export function partitionForKey(key: string, partitions: number): number {
  return signSafeMod(javaStringHash(key), partitions);
}

/** Round-robin over partitions for messages without a key; one per producer process. */
export class RoundRobinRouter {
  private next: number;

  /** @param start the first partition index (inject a random one so producers do not all start at 0). */
  constructor(start: number) {
    this.next = Math.max(0, Math.floor(start));
  }

  choose(partitions: number): number {
    const chosen = signSafeMod(this.next, partitions);
    this.next = (this.next + 1) % 1_000_000_007;
    return chosen;
  }
}
