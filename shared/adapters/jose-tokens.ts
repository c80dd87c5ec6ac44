import {
  errors,
  type JWTPayload,
  type JWTVerifyOptions,
  type JWTVerifyResult,
  jwtVerify,
  SignJWT,
} from 'jose';
import { type TokenRefusal, TokenRefusedError } from '../domain/token-refusal.ts';
import type { Clock } from '../ports/clock.ts';
import type { TokenKey } from './token-keys.ts';

/** What a verified token says: the role, and when the token stops and starts being valid. */
export interface VerifiedToken {
  readonly role: string;
  /**
   * From this instant (ms since the epoch) the token is refused as expired: `exp`
   * plus the clock tolerance. Absent for a token without `exp` (as Pulsar's, it never expires).
   */
  readonly refusedFromMs?: number;
  /**
   * Until this instant the token is refused as not valid yet: `nbf` minus the clock
   * tolerance. Absent when the token has no `nbf` or it had passed when verified.
   */
  readonly validFromMs?: number;
}

export interface TokenVerifierOptions {
  /** The secret (HS256) or public key (RS256, ES256); a token signed with another algorithm is refused. */
  readonly key: TokenKey;
  /** The claim holding the role: Pulsar's `tokenAuthClaim`, `sub` by default. */
  readonly roleClaim: string;
  /**
   * Pulsar's `tokenAudienceClaim` / `tokenAudience`: the claim must be this
   * audience or a list that holds it. Absent: audience is not checked.
   */
  readonly audience?: { readonly claim: string; readonly value: string };
  /** Leeway on `exp` and `nbf`, in seconds (Pulsar's `tokenAllowedClockSkewSeconds`). */
  readonly clockToleranceSeconds: number;
  readonly clock: Clock;
}

/**
 * Verifies bearer tokens as Pulsar's `AuthenticationProviderToken` does, with
 * `jose`: the signature with the one configured key and algorithm, then `exp`,
 * `nbf` (each with the clock tolerance), the audience if one is configured,
 * and the role claim. A refusal is a {@link TokenRefusedError} naming the check.
 * Cost: one signature check (HMAC, or one RSA/ECDSA verification); no I/O.
 *
 * A token that only fails `nbf` is reported verified with `validFromMs`: its
 * every other check passed (verified as at that instant), and whoever keeps
 * the answer (API Gateway's authorizer cache) refuses it until then and
 * serves it from then on, as it refuses an expiring token from `refusedFromMs`.
 *
 * @example
 * const verifier = new TokenVerifier({ key: secretKeyFrom(secret), roleClaim: 'sub', clockToleranceSeconds: 0, clock });
 * const { role } = await verifier.verify(token); // throws TokenRefusedError('expired') once exp passed
 */
export class TokenVerifier {
  constructor(private readonly options: TokenVerifierOptions) {}

  async verify(token: string): Promise<VerifiedToken> {
    const nowMs = this.options.clock.nowMs();
    let result: JWTVerifyResult;
    let validFromMs: number | undefined;
    try {
      result = await this.verifyAt(token, nowMs);
    } catch (error) {
      const nbf = error instanceof errors.JWTClaimValidationFailed ? error.payload.nbf : undefined;
      if (refusalOf(error) !== 'notYetValid' || typeof nbf !== 'number') throw refused(error);
      // Every other check, as at the instant the token becomes valid.
      validFromMs = (nbf - this.options.clockToleranceSeconds) * 1000;
      try {
        result = await this.verifyAt(token, Math.max(nowMs, validFromMs));
      } catch (later) {
        throw refused(later);
      }
    }
    const { payload } = result;
    this.checkAudience(payload);
    const role = payload[this.options.roleClaim];
    if (typeof role !== 'string' || role.length === 0) throw new TokenRefusedError('noRole');
    return {
      role,
      ...(payload.exp === undefined
        ? {}
        : { refusedFromMs: (payload.exp + this.options.clockToleranceSeconds) * 1000 }),
      ...(validFromMs === undefined ? {} : { validFromMs }),
    };
  }

  private verifyAt(token: string, atMs: number): Promise<JWTVerifyResult> {
    const { key, audience, clockToleranceSeconds } = this.options;
    const options: JWTVerifyOptions = {
      algorithms: [key.algorithm],
      clockTolerance: clockToleranceSeconds,
      currentDate: new Date(atMs),
      ...(audience?.claim === 'aud' ? { audience: audience.value } : {}),
    };
    return jwtVerify(token, key.key, options);
  }

  /** jose checks `aud` itself; Pulsar lets the audience sit in another claim, checked here alike. */
  private checkAudience(payload: JWTPayload): void {
    const audience = this.options.audience;
    if (audience === undefined || audience.claim === 'aud') return;
    const claim = payload[audience.claim];
    const values = Array.isArray(claim) ? claim : [claim];
    if (!values.includes(audience.value)) throw new TokenRefusedError('audience');
  }
}

/** Which check a jose error reports; anything jose cannot parse is malformed. */
function refusalOf(error: unknown): TokenRefusal {
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'check_failed' && error.claim === 'nbf') return 'notYetValid';
    if (error.claim === 'aud') return 'audience'; // missing, or not this audience
    return 'malformed'; // a claim of the wrong type, e.g. a string exp
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'signature';
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return 'algorithm';
  }
  return 'malformed';
}

function refused(error: unknown): TokenRefusedError {
  return new TokenRefusedError(refusalOf(error), { cause: error });
}

/** Claims a minted token carries: the role under `sub`, and optionally `exp` and `aud`. */
export interface TokenClaims {
  readonly sub: string;
  /** Expiry, seconds since the epoch; absent means the token never expires (as Pulsar's). */
  readonly exp?: number;
  readonly aud?: string;
}

/**
 * Mints a token for `claims.sub` with `key` and its algorithm, as Pulsar's
 * `tokens create` (no `iat`: the same claims give the same token).
 *
 * @example await signToken({ sub: 'admin' }, secretKeyFrom(secret)) // 'eyJhbGciOiJIUzI1NiJ9...'
 */
export async function signToken(claims: TokenClaims, key: TokenKey): Promise<string> {
  if (claims.sub.length === 0) throw new TypeError('a token needs a non-empty subject');
  return new SignJWT({ ...claims }).setProtectedHeader({ alg: key.algorithm }).sign(key.key);
}
