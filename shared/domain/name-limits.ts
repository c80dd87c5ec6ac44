/**
 * How long names may be, and why: every name ends up in a DynamoDB key (partition key at most
 * 2,048 bytes, sort key at most 1,024 bytes, both counted in UTF-8), sometimes JSON-encoded,
 * which at worst doubles a name (`"` and `\` are escaped). SQS queue names never hold a name:
 * they are made of the cursor's random id.
 *
 * | name | limit | the tightest key it must fit |
 * | --- | --- | --- |
 * | topic (full, with a partition's `-partition-N`) | 500 bytes | a subscription's membership key, pk `MEM#` + JSON [topic, subscription]: 4 + 2 + 2 × 500 + 3 + 2 × 512 + 2 = 2,035 ≤ 2,048 |
 * | subscription | 256 characters and 512 bytes | the same key; its catalog sort key `S#<name>` (514 ≤ 1,024) |
 *
 * Names are also refused when they are not well-formed UTF-16 (a lone surrogate): DynamoDB stores
 * UTF-8, where every lone surrogate becomes U+FFFD, so two different names would share one key.
 */
export const MAX_TOPIC_NAME_BYTES = 500;
export const MAX_SUBSCRIPTION_NAME_CHARS = 256;
export const MAX_SUBSCRIPTION_NAME_BYTES = 512;

/** The UTF-8 length of `text`, as DynamoDB counts key sizes. Pure (no Buffer). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** True when `text` holds no lone surrogate (String.prototype.isWellFormed, Node 20+). */
export function isWellFormed(text: string): boolean {
  return !/\p{Surrogate}/u.test(text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''));
}
