import { createPrivateKey, createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AcklineError } from '../domain/errors.ts';

/**
 * The signature algorithms ackline verifies, as Pulsar's token authentication
 * uses them: HS256 with a secret key (`tokenSecretKey`), RS256 or ES256 with a
 * public key (`tokenPublicKey`).
 */
export type TokenAlgorithm = 'HS256' | 'RS256' | 'ES256';

/** A key and the one algorithm it signs or verifies with; a token naming any other is refused. */
export interface TokenKey {
  readonly key: KeyObject;
  readonly algorithm: TokenAlgorithm;
}

/** Key material that cannot be read or is not a key ackline can use. Carries `cause`. */
export class InvalidTokenKeyError extends AcklineError {}

/** RSA keys shorter than this are refused (jose, and RFC 7518 section 3.3). */
const MIN_RSA_MODULUS_BITS = 2048;

/**
 * Pulsar's key locations, for any key: `data:;base64,<base64>` (the bytes
 * themselves) and `file:///path` (the bytes of a file, read once, here).
 * Anything else is the key given inline: returns undefined.
 */
function bytesAt(material: string): Buffer | undefined {
  if (material.startsWith('data:')) {
    const comma = material.indexOf(',');
    if (comma < 0 || !material.slice(0, comma).endsWith(';base64')) {
      throw new InvalidTokenKeyError('a data: key must be data:;base64,<base64>');
    }
    return Buffer.from(material.slice(comma + 1), 'base64');
  }
  if (material.startsWith('file:')) {
    let path: string;
    try {
      path = fileURLToPath(new URL(material));
    } catch (error) {
      throw new InvalidTokenKeyError('a file: key must be a file URL, e.g. file:///path/to/key', {
        cause: error,
      });
    }
    try {
      return readFileSync(path);
    } catch (error) {
      throw new InvalidTokenKeyError(`the key file ${path} cannot be read`, { cause: error });
    }
  }
  return undefined;
}

/**
 * The HS256 secret key. `data:;base64,...` and `file:...` give its bytes, as
 * Pulsar's `tokenSecretKey` (`tokens create-secret-key` writes 32 raw bytes).
 * Any other value is the secret as text (its UTF-8 bytes), as ackline has
 * always read `ACKLINE_TOKEN_SECRET`; Pulsar would read a bare value as base64,
 * so a Pulsar secret is passed as `data:;base64,<it>`.
 *
 * @example secretKeyFrom('data:;base64,3q2+7w==').algorithm // 'HS256'
 */
export function secretKeyFrom(material: string): TokenKey {
  const bytes = bytesAt(material) ?? Buffer.from(material, 'utf8');
  if (bytes.length === 0) throw new InvalidTokenKeyError('the token secret key is empty');
  return { key: createSecretKey(bytes), algorithm: 'HS256' };
}

/**
 * A public key that verifies tokens (Pulsar's `tokenPublicKey`): PEM
 * (`-----BEGIN PUBLIC KEY-----`), or the DER bytes Pulsar's
 * `tokens create-key-pair` writes, given as `file:`, `data:;base64,` or bare
 * base64. The algorithm follows from the key: RSA (2048 bits or more) is RS256,
 * EC P-256 is ES256.
 *
 * @example publicKeyFrom('file:///etc/ackline/public.key').algorithm // 'RS256'
 */
export function publicKeyFrom(material: string): TokenKey {
  const key = parseKey(material, 'public', (input) =>
    typeof input === 'string'
      ? createPublicKey(input)
      : createPublicKey({ key: input, format: 'der', type: 'spki' }),
  );
  return { key, algorithm: algorithmOf(key) };
}

/**
 * A private key that signs tokens (`tokens create --private-key`): PEM, or the
 * PKCS#8 DER bytes Pulsar's `tokens create-key-pair` writes, as for
 * {@link publicKeyFrom}.
 *
 * @example privateKeyFrom('file:///home/ops/private.key').algorithm // 'ES256'
 */
export function privateKeyFrom(material: string): TokenKey {
  const key = parseKey(material, 'private', (input) =>
    typeof input === 'string'
      ? createPrivateKey(input)
      : createPrivateKey({ key: input, format: 'der', type: 'pkcs8' }),
  );
  return { key, algorithm: algorithmOf(key) };
}

function parseKey(
  material: string,
  kind: 'public' | 'private',
  create: (input: string | Buffer) => KeyObject,
): KeyObject {
  const trimmed = material.trim();
  const bytes = bytesAt(trimmed);
  const pem =
    bytes === undefined
      ? trimmed.startsWith('-----BEGIN')
        ? trimmed
        : undefined
      : bytes.subarray(0, 10).toString('latin1') === '-----BEGIN'
        ? bytes.toString('utf8')
        : undefined;
  try {
    return create(pem ?? bytes ?? Buffer.from(trimmed, 'base64'));
  } catch (error) {
    throw new InvalidTokenKeyError(
      `the token ${kind} key is neither PEM nor ${kind === 'public' ? 'X.509 (SPKI)' : 'PKCS#8'} DER`,
      { cause: error },
    );
  }
}

function algorithmOf(key: KeyObject): TokenAlgorithm {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa') {
    if ((details.modulusLength ?? 0) < MIN_RSA_MODULUS_BITS) {
      throw new InvalidTokenKeyError(`an RSA token key needs at least ${MIN_RSA_MODULUS_BITS} bits`);
    }
    return 'RS256';
  }
  if (key.asymmetricKeyType === 'ec' && details.namedCurve === 'prime256v1') return 'ES256';
  throw new InvalidTokenKeyError(
    `a token key must be RSA (RS256) or EC P-256 (ES256), got ${key.asymmetricKeyType}` +
      (details.namedCurve ? ` ${details.namedCurve}` : ''),
  );
}
