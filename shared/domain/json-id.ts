/**
 * An id for a JSON answer: a JSON number, as Pulsar's admin API writes ids,
 * while it is exact in a JavaScript number; a string of digits beyond 2^53 so
 * that no digit is lost.
 */
export function jsonId(id: bigint): number | string {
  return id <= BigInt(Number.MAX_SAFE_INTEGER) && id >= BigInt(Number.MIN_SAFE_INTEGER)
    ? Number(id)
    : id.toString();
}
