/**
 * MurmurHash3, x86 32-bit variant, seed 0, over the UTF-8 bytes of a string: the hash Pulsar's
 * Key_Shared selectors use (`Murmur3_32Hash.makeHash`), which keeps its 31 low bits so the value is
 * a non-negative Java int. Pure; stable across processes and runtimes.
 * @example murmur3Hash31('hello') // 0x248bfa47 & 0x7fffffff
 */
export function murmur3Hash31(text: string): number {
  return murmur3x86_32(new TextEncoder().encode(text)) & 0x7fffffff;
}

/** MurmurHash3 x86_32 of `bytes` with `seed` (default 0), as an unsigned 32-bit integer. */
export function murmur3x86_32(bytes: Uint8Array, seed = 0): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed >>> 0;
  const blocks = bytes.length - (bytes.length % 4);
  for (let i = 0; i < blocks; i += 4) {
    let k =
      (bytes[i] as number) |
      ((bytes[i + 1] as number) << 8) |
      ((bytes[i + 2] as number) << 16) |
      ((bytes[i + 3] as number) << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  const tail = bytes.length % 4;
  if (tail === 3) k ^= (bytes[blocks + 2] as number) << 16;
  if (tail >= 2) k ^= (bytes[blocks + 1] as number) << 8;
  if (tail >= 1) {
    k ^= bytes[blocks] as number;
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
  }
  h ^= bytes.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
