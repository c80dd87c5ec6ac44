import type { APIGatewayProxyResult } from 'aws-lambda';
import { proxyResultOf } from './http-api.ts';
import { ok } from './http-types.ts';

/**
 * Lambda's limit on a synchronous invocation's payload, each way (6 MB on the Lambda quotas page):
 * the proxy event API Gateway sends (the serialized APIGatewayProxyEvent, body and headers
 * included) and the proxy result the function returns (serialized: status, headers and the body
 * string with its JSON escaping, or its base64). API Gateway's own 10 MB is not the binding limit
 * behind a Lambda proxy integration. An answer over it fails after the function did its work
 * (API Gateway answers 502), so every answer is bounded before anything it carries is committed.
 * See docs/design/aws-limits.md.
 */
export const LAMBDA_PAYLOAD_LIMIT_BYTES = 6_291_456;

/**
 * Room every answer keeps for what is not counted item by item: headers a middleware adds, the
 * separator of the first item. Measured envelopes are a few hundred bytes.
 */
export const ANSWER_MARGIN_BYTES = 16 * 1024;

/** The size of a proxy result as Lambda counts it: its JSON serialization, in UTF-8 bytes. */
export function proxyResultBytes(result: APIGatewayProxyResult): number {
  return Buffer.byteLength(JSON.stringify(result), 'utf8');
}

/**
 * The bytes a JSON text takes once it is a proxy result's body, that is, inside a JSON string:
 * each `"` and `\` gains a backslash. Nothing else changes: `JSON.stringify` leaves no control
 * character and no lone surrogate unescaped, and writes other characters as they are (UTF-8 bytes).
 * So a payload character JSON escapes as `\u0001` (6 bytes) takes 7 here, a quote 4.
 * Cost: one pass over the text.
 * @param json the output of `JSON.stringify`
 */
export function bodyStringBytes(json: string): number {
  let escapes = 0;
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i);
    if (code === 0x22 || code === 0x5c) escapes++;
  }
  return Buffer.byteLength(json, 'utf8') + escapes;
}

/** What an answer's list may take in all, and what one item of it takes, as the answer encodes it. */
export interface ListAnswerBudget<T> {
  readonly bytes: number;
  readonly sizeOf: (item: T) => number;
}

/**
 * The byte budget of a 200 answer `{ "<field>": [items] }`: Lambda's limit less the answer with an
 * empty list (status, headers, envelope: measured on the same serialization the handler uses) and
 * ANSWER_MARGIN_BYTES; each item takes its JSON as the body string carries it, and a comma.
 * @example
 * const { bytes, sizeOf } = listAnswerBudget<DeliveredMessage>('messages');
 * // bytes: 6,274,981 (6,291,456 less a 91-byte envelope and the margin); a message of 256 KiB
 * // of '\u0001' has a sizeOf of about 1.8 MB (7 bytes a character), so three fit an answer
 */
export function listAnswerBudget<T>(field: string): ListAnswerBudget<T> {
  const empty = proxyResultBytes(proxyResultOf(ok({ [field]: [] })));
  return {
    bytes: LAMBDA_PAYLOAD_LIMIT_BYTES - ANSWER_MARGIN_BYTES - empty,
    sizeOf: (item) => bodyStringBytes(JSON.stringify(item)) + 1,
  };
}
