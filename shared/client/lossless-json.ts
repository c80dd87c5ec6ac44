/**
 * JSON that keeps 64-bit integers exact. Ledger and entry ids are Java `long`s and may exceed 2^53,
 * where `JSON.parse` and `Number` silently lose digits.
 */

/** A JSON value as {@link parseJson} returns it. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** A JSON object as {@link parseJson} returns it. */
export type JsonObject = { readonly [key: string]: JsonValue };

const INTEGER = /^-?\d+$/;
const NUMBER_CHARACTER = /[-+.eE0-9]/;

/**
 * Parses JSON text; an integer literal outside the safe range (|n| > 2^53 - 1) comes back as a string
 * of its exact decimal digits instead of a rounded number. Linear in the length of the text.
 *
 * @example
 * parseJson('{"ledgerId":18446744073709551615,"entryId":3}'); // { ledgerId: '18446744073709551615', entryId: 3 }
 */
export function parseJson(text: string): JsonValue {
  let rewritten = '';
  let copiedUpTo = 0;
  for (let i = 0; i < text.length; i++) {
    const character = text[i]!;
    if (character === '"') {
      // Skip the string, escapes included: digits inside strings are not numbers.
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      continue;
    }
    if (character === '-' || (character >= '0' && character <= '9')) {
      let end = i + 1;
      while (end < text.length && NUMBER_CHARACTER.test(text[end]!)) end++;
      const literal = text.slice(i, end);
      if (INTEGER.test(literal) && !Number.isSafeInteger(Number(literal))) {
        rewritten += `${text.slice(copiedUpTo, i)}"${literal}"`;
        copiedUpTo = end;
      }
      i = end - 1;
    }
  }
  return JSON.parse(rewritten + text.slice(copiedUpTo)) as JsonValue;
}

/** A value {@link stringifyJson} can write: JSON values plus bigints, written as bare integers. */
export type JsonInput =
  | string
  | number
  | boolean
  | bigint
  | null
  | readonly JsonInput[]
  | { readonly [key: string]: JsonInput | undefined };

/**
 * As `JSON.stringify`, but a bigint is written as a bare integer literal with all its digits.
 *
 * @example
 * stringifyJson({ ledgerId: 18446744073709551615n }); // '{"ledgerId":18446744073709551615}'
 */
export function stringifyJson(value: JsonInput): string {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (isArray(value)) return `[${value.map(stringifyJson).join(',')}]`;
  const members: string[] = [];
  for (const [key, member] of Object.entries(value)) {
    if (member !== undefined) members.push(`${JSON.stringify(key)}:${stringifyJson(member)}`);
  }
  return `{${members.join(',')}}`;
}

function isArray(value: object): value is readonly JsonInput[] {
  return Array.isArray(value);
}
