import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { signToken, TokenVerifier, type TokenVerifierOptions } from '../../../shared/adapters/jose-tokens.ts';
import { publicKeyFrom, secretKeyFrom, type TokenKey } from '../../../shared/adapters/token-keys.ts';
import {
  type TokenRefusal,
  TokenRefusedError,
  tokenRefusalReasons,
} from '../../../shared/domain/token-refusal.ts';
import { base64url, hs256Token } from '../../support/hs256-token.ts';
import { ManualClock } from '../../support/manual-clock.ts';

const NOW_S = 1_700_000_000;
const NOW_MS = NOW_S * 1000;
const SECRET = 'unit-test-secret-0123456789';

/** A signing key and the verifying key of each algorithm ackline accepts. */
function keyPairs(): { name: string; signing: TokenKey; verifying: TokenKey; other: TokenKey }[] {
  const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const [r1, r2, e1, e2] = [rsa(), rsa(), ec(), ec()];
  return [
    {
      name: 'HS256 (secret key)',
      signing: secretKeyFrom(SECRET),
      verifying: secretKeyFrom(SECRET),
      other: secretKeyFrom('another-secret-0123456789'),
    },
    {
      name: 'RS256 (public key)',
      signing: { key: r1.privateKey, algorithm: 'RS256' },
      verifying: { key: r1.publicKey, algorithm: 'RS256' },
      other: { key: r2.privateKey, algorithm: 'RS256' },
    },
    {
      name: 'ES256 (public key)',
      signing: { key: e1.privateKey, algorithm: 'ES256' },
      verifying: { key: e1.publicKey, algorithm: 'ES256' },
      other: { key: e2.privateKey, algorithm: 'ES256' },
    },
  ];
}

function verifier(key: TokenKey, options: Partial<TokenVerifierOptions> = {}) {
  const clock = new ManualClock(NOW_MS);
  return {
    clock,
    verifier: new TokenVerifier({ key, roleClaim: 'sub', clockToleranceSeconds: 0, clock, ...options }),
  };
}

async function refusalOf(promise: Promise<unknown>): Promise<TokenRefusal> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(TokenRefusedError);
  const refused = error as TokenRefusedError;
  expect(refused.message).toBe(tokenRefusalReasons[refused.refusal]);
  return refused.refusal;
}

describe.each(keyPairs())('TokenVerifier with $name', ({ signing, verifying, other }) => {
  it('accepts a token its key signed, with the role and no expiry', async () => {
    const token = await signToken({ sub: 'ops' }, signing);

    const verified = await verifier(verifying).verifier.verify(token);

    expect(verified).toEqual({ role: 'ops' });
  });

  it('refuses a token signed with another key of the same algorithm as a bad signature', async () => {
    const token = await signToken({ sub: 'ops' }, other);

    expect(await refusalOf(verifier(verifying).verifier.verify(token))).toBe('signature');
  });

  it('refuses a token whose payload was changed after signing as a bad signature', async () => {
    const [header, , signature] = (await signToken({ sub: 'ops' }, signing)).split('.');

    const forged = `${header}.${base64url({ sub: 'admin' })}.${signature}`;

    expect(await refusalOf(verifier(verifying).verifier.verify(forged))).toBe('signature');
  });

  it.each([
    ['none', `${base64url({ alg: 'none' })}.${base64url({ sub: 'admin' })}.`],
    ['HS512', hs256Token({ sub: 'admin' }, SECRET, { alg: 'HS512' })],
  ])('refuses alg %s as an algorithm it does not accept', async (_alg, token) => {
    expect(await refusalOf(verifier(verifying).verifier.verify(token))).toBe('algorithm');
  });
});

describe('TokenVerifier: algorithm confusion', () => {
  it('refuses an HS256 token, signed with the public key bytes as a secret, to a public-key verifier', async () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString();

    const token = hs256Token({ sub: 'admin' }, pem);

    expect(await refusalOf(verifier(publicKeyFrom(pem)).verifier.verify(token))).toBe('algorithm');
  });
});

describe('TokenVerifier: each check names itself', () => {
  const key = secretKeyFrom(SECRET);
  const sign = (claims: unknown) => hs256Token(claims, SECRET);

  it.each([
    ['no dots', 'abc'],
    ['three parts of nothing', 'not.a.jwt'],
    ['a header that is not JSON', `${Buffer.from('{').toString('base64url')}.${base64url({ sub: 'a' })}.sig`],
    ['claims that are not an object', sign([1, 2])],
    ['a string exp', sign({ sub: 'a', exp: 'tomorrow' })],
    ['a string nbf', sign({ sub: 'a', nbf: 'yesterday' })],
  ])('malformed: %s', async (_label, token) => {
    expect(await refusalOf(verifier(key).verifier.verify(token))).toBe('malformed');
  });

  it.each([
    ['no sub', { role: 'admin' }],
    ['an empty sub', { sub: '' }],
    ['a numeric sub', { sub: 42 }],
  ])('noRole: %s', async (_label, claims) => {
    expect(await refusalOf(verifier(key).verifier.verify(sign(claims)))).toBe('noRole');
  });

  it('reads the role from the configured claim (Pulsar tokenAuthClaim)', async () => {
    const { verifier: byRole } = verifier(key, { roleClaim: 'role' });

    expect(await byRole.verify(sign({ sub: 'user-1', role: 'ops' }))).toEqual({ role: 'ops' });
    expect(await refusalOf(byRole.verify(sign({ sub: 'ops' })))).toBe('noRole');
  });

  it('expired: exp has passed', async () => {
    expect(await refusalOf(verifier(key).verifier.verify(sign({ sub: 'a', exp: NOW_S - 1 })))).toBe(
      'expired',
    );
  });

  it('a token not valid yet that fails another check is refused for that check', async () => {
    const wrongAudience = sign({ sub: 'a', nbf: NOW_S + 60, aud: 'elsewhere' });
    const { verifier: withAudience } = verifier(key, { audience: { claim: 'aud', value: 'ackline' } });

    expect(await refusalOf(withAudience.verify(wrongAudience))).toBe('audience');
    expect(await refusalOf(verifier(key).verifier.verify(sign({ nbf: NOW_S + 60 })))).toBe('noRole');
  });

  it('reports a token that only fails nbf as verified from nbf, for the handlers to refuse until then', async () => {
    const verified = await verifier(key).verifier.verify(
      sign({ sub: 'a', nbf: NOW_S + 60, exp: NOW_S + 120 }),
    );

    expect(verified).toEqual({
      role: 'a',
      validFromMs: (NOW_S + 60) * 1000,
      refusedFromMs: (NOW_S + 120) * 1000,
    });
  });

  it('refuses as expired a token whose exp comes before its nbf', async () => {
    const token = sign({ sub: 'a', nbf: NOW_S + 60, exp: NOW_S + 30 });

    expect(await refusalOf(verifier(key).verifier.verify(token))).toBe('expired');
  });

  it.each([
    ['aud equal', 'aud', { aud: 'ackline' }, undefined],
    ['aud listing it', 'aud', { aud: ['other', 'ackline'] }, undefined],
    ['aud of another', 'aud', { aud: 'other' }, 'audience'],
    ['no aud', 'aud', {}, 'audience'],
    ['custom claim equal', 'scope', { scope: 'ackline' }, undefined],
    ['custom claim listing it', 'scope', { scope: ['ackline'] }, undefined],
    ['custom claim of another', 'scope', { scope: 'other', aud: 'ackline' }, 'audience'],
    ['no custom claim', 'scope', { aud: 'ackline' }, 'audience'],
  ])('audience (Pulsar tokenAudienceClaim/tokenAudience): %s', async (_label, claim, claims, refusal) => {
    const { verifier: withAudience } = verifier(key, { audience: { claim, value: 'ackline' } });

    const result = withAudience.verify(sign({ sub: 'a', ...claims }));

    if (refusal === undefined) expect(await result).toEqual({ role: 'a' });
    else expect(await refusalOf(result)).toBe(refusal);
  });

  it('ignores aud when no audience is configured', async () => {
    expect(await verifier(key).verifier.verify(sign({ sub: 'a', aud: 'anything' }))).toEqual({ role: 'a' });
  });

  it('accepts a token jose signed with iat and standard claims', async () => {
    const token = await new SignJWT({ sub: 'ops' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt(NOW_S)
      .setExpirationTime(NOW_S + 60)
      .sign(key.key);

    expect(await verifier(key).verifier.verify(token)).toEqual({
      role: 'ops',
      refusedFromMs: (NOW_S + 60) * 1000,
    });
  });
});

describe('TokenVerifier: clock tolerance boundaries', () => {
  const key = secretKeyFrom(SECRET);
  const EXP = NOW_S + 100;
  const NBF = NOW_S + 100;

  it.each([
    [0, EXP * 1000 - 1, undefined],
    [0, EXP * 1000, 'expired'],
    [5, (EXP + 5) * 1000 - 1, undefined],
    [5, (EXP + 5) * 1000, 'expired'],
  ] as const)('exp with tolerance %i s at %i ms: %s', async (toleranceS, atMs, refusal) => {
    const { clock, verifier: check } = verifier(key, { clockToleranceSeconds: toleranceS });
    clock.set(atMs);

    const result = check.verify(hs256Token({ sub: 'a', exp: EXP }, SECRET));

    if (refusal === undefined) {
      expect(await result).toEqual({ role: 'a', refusedFromMs: (EXP + toleranceS) * 1000 });
    } else {
      expect(await refusalOf(result)).toBe(refusal);
    }
  });

  it.each([
    [0, NBF * 1000 - 1, NBF * 1000],
    [0, NBF * 1000, undefined],
    [5, (NBF - 5) * 1000 - 1, (NBF - 5) * 1000],
    [5, (NBF - 5) * 1000, undefined],
  ] as const)('nbf with tolerance %i s at %i ms: valid from %s', async (toleranceS, atMs, validFromMs) => {
    const { clock, verifier: check } = verifier(key, { clockToleranceSeconds: toleranceS });
    clock.set(atMs);

    const verified = await check.verify(hs256Token({ sub: 'a', nbf: NBF }, SECRET));

    expect(verified).toEqual({ role: 'a', ...(validFromMs === undefined ? {} : { validFromMs }) });
  });
});

describe('signToken', () => {
  it('writes sub, exp and aud, and nothing else', async () => {
    const token = await signToken({ sub: 'ops', exp: NOW_S + 60, aud: 'ackline' }, secretKeyFrom(SECRET));

    const [header, payload] = token
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));

    expect(header).toEqual({ alg: 'HS256' });
    expect(payload).toEqual({ sub: 'ops', exp: NOW_S + 60, aud: 'ackline' });
  });

  it('refuses an empty subject', async () => {
    await expect(signToken({ sub: '' }, secretKeyFrom(SECRET))).rejects.toThrow(/non-empty subject/);
  });
});
