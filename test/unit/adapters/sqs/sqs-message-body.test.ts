import { describe, expect, it } from 'vitest';
import { sqsMessageBody } from '../../../../shared/adapters/sqs/sqs-message-body.ts';

/** The characters SQS accepts in a message body. */
const SQS_ALLOWED = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

describe('sqsMessageBody', () => {
  it.each([
    ['plain text', 'héllo'],
    ['U+FFFE and U+FFFF', '\uFFFE\uFFFFa\uFFFF'],
    ['control characters and a lone surrogate', '\u0000\u0001\uD800'],
    ['a supplementary noncharacter SQS allows', '\u{1FFFE}'],
  ])('%s: only characters SQS accepts, and the same JSON value', (_, payload) => {
    const body = sqsMessageBody(JSON.stringify({ p: payload }));

    expect(SQS_ALLOWED.test(body)).toBe(true);
    expect(JSON.parse(body)).toEqual({ p: payload });
  });

  it('leaves a body without them unchanged', () => {
    const json = JSON.stringify({ p: 'x'.repeat(100) });
    expect(sqsMessageBody(json)).toBe(json);
  });
});
