import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { TokenRefusedError, tokenRefusalReasons } from '../../../shared/domain/token-refusal.ts';
import {
  authorizationHeaderValues,
  requireCurrentCredentials,
  TOKEN_EXPIRES_AT_MS,
  TOKEN_REFUSAL,
  TOKEN_VALID_FROM_MS,
} from '../../../shared/http/credentials.ts';

const NOW_MS = 1_700_000_000_000;

function event(
  authorizer: Record<string, unknown> | null,
  authorization: readonly string[] = ['Bearer t'],
): APIGatewayProxyEvent {
  return {
    headers: authorization.length > 0 ? { Authorization: authorization.at(-1) } : {},
    multiValueHeaders: authorization.length > 0 ? { Authorization: [...authorization] } : {},
    requestContext: { authorizer },
  } as unknown as APIGatewayProxyEvent;
}

describe('requireCurrentCredentials', () => {
  it.each([
    ['a token without expiry', { role: 'r' }],
    ['a token expiring later (number)', { role: 'r', [TOKEN_EXPIRES_AT_MS]: NOW_MS + 1 }],
    [
      'a token expiring later (string, as API Gateway may pass it)',
      { role: 'r', [TOKEN_EXPIRES_AT_MS]: `${NOW_MS + 1}` },
    ],
    ['a public path (no authorizer context)', null],
  ])('lets %s through', (_label, authorizer) => {
    expect(() => requireCurrentCredentials(event(authorizer), NOW_MS)).not.toThrow();
  });

  it.each([
    ['a token valid from now', { role: 'r', [TOKEN_VALID_FROM_MS]: NOW_MS }],
    ['a token valid from before (string)', { role: 'r', [TOKEN_VALID_FROM_MS]: `${NOW_MS - 1}` }],
  ])('lets %s through', (_label, authorizer) => {
    expect(() => requireCurrentCredentials(event(authorizer), NOW_MS)).not.toThrow();
  });

  it.each([
    ['a token expiring now', { role: 'r', [TOKEN_EXPIRES_AT_MS]: NOW_MS }, 'expired'],
    ['a token that expired', { role: 'r', [TOKEN_EXPIRES_AT_MS]: `${NOW_MS - 1}` }, 'expired'],
    ['an unreadable expiry', { role: 'r', [TOKEN_EXPIRES_AT_MS]: 'soon' }, 'expired'],
    ['a token valid a millisecond later', { role: 'r', [TOKEN_VALID_FROM_MS]: NOW_MS + 1 }, 'notYetValid'],
    ['an unreadable start', { role: 'r', [TOKEN_VALID_FROM_MS]: 'later' }, 'notYetValid'],
    ...(['malformed', 'algorithm', 'signature', 'expired', 'audience', 'missing', 'noRole'] as const).map(
      (refusal) => [`a refusal (${refusal})`, { [TOKEN_REFUSAL]: refusal }, refusal] as const,
    ),
    ['a refusal code it does not know', { [TOKEN_REFUSAL]: 'cosmic-rays' }, 'malformed'],
    ['a context without a role', { superuser: 'true' }, 'noRole'],
  ] as const)('refuses %s with the reason of its check', (_label, authorizer, refusal) => {
    expect(() => requireCurrentCredentials(event(authorizer), NOW_MS)).toThrow(
      new TokenRefusedError(refusal),
    );
    expect(tokenRefusalReasons[refusal]).toMatch(/^Unauthorized: /);
  });

  it('refuses a second Authorization header, which the gateway cache key does not see', () => {
    expect(() => requireCurrentCredentials(event({ role: 'r' }, ['Bearer a', 'Bearer a']), NOW_MS)).toThrow(
      new TokenRefusedError('ambiguous'),
    );
  });
});

describe('authorizationHeaderValues', () => {
  it.each([
    [
      'both maps: multi-value lines win',
      { headers: { authorization: 'b' }, multiValueHeaders: { Authorization: ['a', 'b'] } },
      ['a', 'b'],
    ],
    ['names of any case', { headers: { AUTHORIZATION: 'a', authorization: 'b' } }, ['a', 'b']],
    ['headers only', { headers: { Authorization: 'a' }, multiValueHeaders: null }, ['a']],
    ['none', { headers: { Accept: '*/*' } }, []],
  ])('reads %s', (_label, request, expected) => {
    expect(authorizationHeaderValues(request)).toEqual(expected);
  });
});
