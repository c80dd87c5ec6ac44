import { describe, expect, it } from 'vitest';
import type { DeliveredMessage } from '../../../shared/application/consumers/receive-messages.ts';
import { proxyResultOf } from '../../../shared/http/http-api.ts';
import { ok } from '../../../shared/http/http-types.ts';
import {
  ANSWER_MARGIN_BYTES,
  bodyStringBytes,
  LAMBDA_PAYLOAD_LIMIT_BYTES,
  listAnswerBudget,
  proxyResultBytes,
} from '../../../shared/http/lambda-payload.ts';
import { MAX_METADATA_BYTES, MAX_PAYLOAD_BYTES } from '../../../shared/http/produce-request.ts';

/** The bytes of `value`'s JSON once it is a JSON string's content: what the proxy result holds. */
const twiceEncoded = (value: unknown) => Buffer.byteLength(JSON.stringify(JSON.stringify(value))) - 2;

const message = (payload: string, extra: Partial<DeliveredMessage> = {}): DeliveredMessage => ({
  messageId: '12:345:-1',
  payload,
  key: null,
  properties: {},
  redeliveryCount: 0,
  publishTime: 1_700_000_000_000,
  eventTime: null,
  deliveryHandle: 'eyJjIjoiY3Vyc29yIiwibCI6IjEyIiwiZSI6IjM0NSJ9',
  ...extra,
});

describe("Lambda's payload limit, as an answer counts it", () => {
  it('is 6 MiB (6,291,456 bytes)', () => {
    expect(LAMBDA_PAYLOAD_LIMIT_BYTES).toBe(6 * 1024 * 1024);
  });

  it.each([
    ['plain ASCII', 'hello'],
    ['quotes and backslashes (4 bytes each)', '"\\"\\'],
    ['short escapes: newline, tab (3 bytes each)', '\n\t\r\b\f'],
    ['other control characters (7 bytes each)', '\u0000\u0001\u001f'],
    ['DEL, not escaped', '\u007f'],
    ['two-byte characters', 'éàü'],
    ['line and paragraph separators, not escaped', '\u2028\u2029'],
    ['characters SQS refuses', '\uFFFE\uFFFF'],
    ['an emoji (a surrogate pair)', '💥'],
    ['lone surrogates (escaped, 7 bytes each)', '\ud800x\udfff'],
    ['everything at once', 'a"\\\n\u0001é💥\ud800\u2028'],
  ])('bodyStringBytes counts the body string exactly: %s', (_, payload) => {
    const value = message(payload, { key: payload, properties: { [payload]: payload } });

    expect(bodyStringBytes(JSON.stringify(value))).toBe(twiceEncoded(value));
  });

  it('an answer of listed items is exactly its empty envelope plus each item as sized', () => {
    const budget = listAnswerBudget<DeliveredMessage>('messages');
    const items = [message('x'.repeat(1000)), message('\u0001"é'.repeat(500)), message('💥\n')];
    const empty = proxyResultBytes(proxyResultOf(ok({ messages: [] })));

    const answer = proxyResultBytes(proxyResultOf(ok({ messages: items })));

    // Each item counts a comma; the first has none.
    expect(answer).toBe(empty + items.reduce((sum, item) => sum + budget.sizeOf(item), 0) - 1);
    expect(budget.bytes).toBe(LAMBDA_PAYLOAD_LIMIT_BYTES - ANSWER_MARGIN_BYTES - empty);
  });

  it('the largest message the produce API takes, escaped at worst, fits an empty answer', () => {
    const budget = listAnswerBudget<DeliveredMessage>('messages');
    // Control characters escape to 7 bytes each in the body string; metadata split over
    // properties of 1,024-byte names and 16,384-byte values, as produce allows.
    const metadata = Object.fromEntries(
      Array.from({ length: MAX_METADATA_BYTES / (1024 + 15_360) }, (_, i) => [
        `${i}`.padEnd(1024, '\u0001'),
        '\u0001'.repeat(15_360),
      ]),
    );
    const worst = message('\u0001'.repeat(MAX_PAYLOAD_BYTES), { properties: metadata });

    expect(budget.sizeOf(worst)).toBeLessThan(budget.bytes);
    expect(budget.sizeOf(worst)).toBeGreaterThan(7 * (MAX_PAYLOAD_BYTES + MAX_METADATA_BYTES) - 1000);
  });
});
