import { createHmac, timingSafeEqual } from 'node:crypto';
import { UnauthorizedError } from '../domain/errors.ts';

/**
 * JSON Web Tokens signed with HS256, as Pulsar's token authentication issues
 * them (`sub` is the role). Only HS256 is accepted: a token whose header names
 * another algorithm (or `none`) is refused before any signature check.
 */
export interface TokenClaims {
  readonly sub: string;
  /** Expiry, seconds since the epoch; absent means the token does not expire (as Pulsar's). */
  readonly exp?: number;
  readonly iat?: number;
}

export class InvalidTokenError extends UnauthorizedError {}

const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

function base64url(input: string | Buffer): string {
  return Buffer.from(input).toString('base64url');
}

function signature(signingInput: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(signingInput).digest();
}

/**
 * Mints a token for `subject`.
 * @example signToken({ sub: 'admin' }, secret) // 'eyJhbGciOiJIUzI1NiIs...'
 */
export function signToken(claims: TokenClaims, secret: string): string {
  if (claims.sub.length === 0) throw new InvalidTokenError('A token needs a non-empty subject');
  const payload = base64url(JSON.stringify(claims));
  const signingInput = `${HEADER}.${payload}`;
  return `${signingInput}.${base64url(signature(signingInput, secret))}`;
}

/** Verifies signature, algorithm and expiry; throws InvalidTokenError saying why. */
export function verifyToken(token: string, secret: string, nowMs: number): TokenClaims {
  const parts = token.split('.');
  if (parts.length !== 3) throw new InvalidTokenError('Malformed token');
  const [header, payload, sig] = parts as [string, string, string];
  let parsedHeader: unknown;
  let claims: unknown;
  try {
    parsedHeader = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidTokenError('Malformed token');
  }
  if (!isRecord(parsedHeader) || parsedHeader.alg !== 'HS256') {
    throw new InvalidTokenError('Only HS256 tokens are accepted');
  }
  const expected = signature(`${header}.${payload}`, secret);
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new InvalidTokenError('Bad token signature');
  }
  if (!isRecord(claims) || typeof claims.sub !== 'string' || claims.sub.length === 0) {
    throw new InvalidTokenError('Token has no subject');
  }
  if (claims.exp !== undefined) {
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= nowMs) {
      throw new InvalidTokenError('Token expired');
    }
  }
  return claims as unknown as TokenClaims;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
