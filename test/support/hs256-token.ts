import { createHmac } from 'node:crypto';

/**
 * Mints an HS256 token over any claims, synchronously, for the suites: fixtures
 * need tokens where no await fits (class fields, `AdminApi.as`), and adversarial
 * tests need claims the product's signer refuses to write (no subject, an
 * empty one, a string `exp`). Deliberately not the code under test: ackline
 * signs and verifies with `jose` (shared/adapters/jose-tokens.ts), and a token
 * from here is an independent witness that jose reads standard JWTs.
 *
 * @example hs256Token({ sub: 'admin' }, TEST_TOKEN_SECRET)
 */
export function hs256Token(
  claims: unknown,
  secret: string,
  header: unknown = { alg: 'HS256', typ: 'JWT' },
): string {
  const input = `${base64url(header)}.${base64url(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** The JSON of `value`, base64url-encoded: one part of a compact JWS. */
export function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
