import { UnauthorizedError } from './errors.ts';

/**
 * Why a bearer token was refused: one code per check of Pulsar's token
 * authentication, so a 401 names the check that failed. The reasons are
 * constants: they never quote the token, nor any part of it.
 */
export const tokenRefusalReasons = {
  /** No `Authorization: Bearer <token>` header (or another scheme than Bearer). */
  missing: 'Unauthorized: no bearer token (expected Authorization: Bearer <token>)',
  /** More than one Authorization header: proxies disagree on which one counts. */
  ambiguous: 'Unauthorized: more than one Authorization header',
  /** Not a compact JWS, or its header or claims are not what a JWT holds. */
  malformed: 'Unauthorized: the token is malformed',
  /** Signed with an algorithm this server does not verify (`none`, or HS256 against a public key). */
  algorithm: 'Unauthorized: the token is signed with an algorithm this server does not accept',
  /** The signature does not verify with the configured key. */
  signature: 'Unauthorized: the token signature does not verify',
  /** `exp` has passed (beyond the clock tolerance). */
  expired: 'Unauthorized: the token expired',
  /** `nbf` is still ahead (beyond the clock tolerance). */
  notYetValid: 'Unauthorized: the token is not valid yet',
  /** The audience claim does not name this server's audience. */
  audience: 'Unauthorized: the token is not for this audience',
  /** The role claim (`sub` by default) is missing, empty or not a string. */
  noRole: 'Unauthorized: the token names no role',
} as const;

export type TokenRefusal = keyof typeof tokenRefusalReasons;

export function isTokenRefusal(value: unknown): value is TokenRefusal {
  return typeof value === 'string' && Object.hasOwn(tokenRefusalReasons, value);
}

/** A bearer token was refused (401); `refusal` names the check, the message is its reason. */
export class TokenRefusedError extends UnauthorizedError {
  constructor(
    readonly refusal: TokenRefusal,
    options?: { readonly cause?: unknown },
  ) {
    super(tokenRefusalReasons[refusal], options);
  }
}
