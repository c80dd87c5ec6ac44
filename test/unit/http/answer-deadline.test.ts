import { describe, expect, it } from 'vitest';
import {
  ANSWER_MARGIN_MS,
  ANSWER_WITHIN_MS,
  API_INTEGRATION_TIMEOUT_MS,
  answerDeadlineMs,
} from '../../../shared/http/answer-deadline.ts';

const NOW = 1_700_000_000_000;

describe('answerDeadlineMs', () => {
  it('answers 25 s after the request started: 4 s before API Gateway gives up', () => {
    expect([API_INTEGRATION_TIMEOUT_MS, ANSWER_MARGIN_MS, ANSWER_WITHIN_MS]).toEqual([29_000, 4_000, 25_000]);
  });

  it.each([
    ['a warm start (the request started 30 ms ago)', NOW - 30, NOW - 30 + 25_000],
    ['a cold start that took 6 s', NOW - 6_000, NOW + 19_000],
    ['a request whose deadline already passed', NOW - 26_000, NOW - 1_000],
    ["API Gateway's clock ahead of the function's: the function's start", NOW + 500, NOW + 25_000],
    ['no requestTimeEpoch (a handler called directly): the function start', undefined, NOW + 25_000],
    ['a requestTimeEpoch that is not a number', '1700000000000', NOW + 25_000],
    ['a requestTimeEpoch that is not finite', Number.NaN, NOW + 25_000],
  ])('%s', (_, requestTimeEpoch, expected) => {
    expect(answerDeadlineMs(requestTimeEpoch, NOW)).toBe(expected);
  });
});
