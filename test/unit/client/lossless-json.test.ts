import { describe, expect, it } from 'vitest';
import { parseJson, stringifyJson } from '../../../shared/client/lossless-json.ts';

describe('parseJson', () => {
  it.each([
    ['18446744073709551615', '18446744073709551615'],
    ['-9007199254740993', '-9007199254740993'],
    ['9007199254740991', 9007199254740991],
    ['1.5e300', 1.5e300],
    ['"18446744073709551615"', '18446744073709551615'],
    [
      '{"a":"x\\"99999999999999999999","b":[99999999999999999999,1]}',
      { a: 'x"99999999999999999999', b: ['99999999999999999999', 1] },
    ],
  ])('%s', (text, expected) => {
    expect(parseJson(text)).toEqual(expected);
  });

  it('throws on invalid JSON', () => {
    expect(() => parseJson('{')).toThrow(SyntaxError);
  });
});

describe('stringifyJson', () => {
  it('writes bigints as bare integers and drops undefined members', () => {
    expect(stringifyJson({ id: 18446744073709551615n, list: [1, 'a', null], gone: undefined })).toBe(
      '{"id":18446744073709551615,"list":[1,"a",null]}',
    );
  });
});
