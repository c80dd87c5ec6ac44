import { describe, expect, it } from 'vitest';
import { murmur3Hash31, murmur3x86_32 } from '../../../shared/domain/murmur3.ts';

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('MurmurHash3 x86_32 (the hash of Pulsar’s Key_Shared selectors)', () => {
  it.each([
    ['', 0, 0],
    ['', 1, 0x514e28b7],
    ['abc', 0, 0xb3dd93fa],
    ['abcd', 0, 0x43ed676a],
    ['hello', 0, 0x248bfa47],
    ['Hello, world!', 1234, 0xfaf6cdb3],
    ['The quick brown fox jumps over the lazy dog', 0, 0x2e4ff723],
  ])('%j with seed %i is %i', (text, seed, expected) => {
    expect(murmur3x86_32(utf8(text), seed)).toBe(expected);
  });

  it('keeps 31 bits, as Pulsar’s Murmur3_32Hash.makeHash, over UTF-8', () => {
    expect(murmur3Hash31('hello')).toBe(0x248bfa47 & 0x7fffffff);
    expect(murmur3Hash31('é')).toBe(murmur3x86_32(Uint8Array.of(0xc3, 0xa9)) & 0x7fffffff);
  });
});
