import { createSecretKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  InvalidTokenKeyError,
  privateKeyFrom,
  publicKeyFrom,
  secretKeyFrom,
} from '../../../shared/adapters/token-keys.ts';

// Pulsar's key locations and formats (tokenSecretKey / tokenPublicKey, `tokens create-key-pair`).

const dir = mkdtempSync(join(tmpdir(), 'ackline-keys-'));
function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return pathToFileURL(path).href;
}

describe('secretKeyFrom', () => {
  const bytes = Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00, 0xff]);

  it.each([
    ['text, as its UTF-8 bytes (ackline)', 's3cret', Buffer.from('s3cret')],
    ['data:;base64,', `data:;base64,${bytes.toString('base64')}`, bytes],
    [
      'data:application/octet-stream;base64,',
      `data:application/octet-stream;base64,${bytes.toString('base64')}`,
      bytes,
    ],
    ['file: (raw bytes)', file('secret.key', bytes), bytes],
  ])('reads %s', (_label, material, expected) => {
    const key = secretKeyFrom(material);

    expect(key.algorithm).toBe('HS256');
    expect(key.key.export()).toEqual(createSecretKey(expected).export());
  });

  it.each([
    ['empty data', 'data:;base64,'],
    ['data without base64', 'data:,abc'],
    ['a missing file', 'file:///nonexistent/ackline/secret.key'],
  ])('refuses %s', (_label, material) => {
    expect(() => secretKeyFrom(material)).toThrow(InvalidTokenKeyError);
  });
});

describe.each([
  ['RSA 2048', 'RS256', () => generateKeyPairSync('rsa', { modulusLength: 2048 })],
  ['EC P-256', 'ES256', () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' })],
] as const)('key pair %s', (_name, algorithm, generate) => {
  const { publicKey, privateKey } = generate();
  const publicDer = publicKey.export({ format: 'der', type: 'spki' });
  const privateDer = privateKey.export({ format: 'der', type: 'pkcs8' });
  const publicPem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const privatePem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

  it.each([
    ['PEM', publicPem],
    ['bare base64 of DER (Pulsar)', publicDer.toString('base64')],
    ['data:;base64, of DER', `data:;base64,${publicDer.toString('base64')}`],
    ['file: of DER (tokens create-key-pair)', file(`${algorithm}-public.key`, publicDer)],
    ['file: of PEM', file(`${algorithm}-public.pem`, publicPem)],
  ])(`reads the public key as %s, for ${algorithm}`, (_label, material) => {
    const key = publicKeyFrom(material);

    expect(key.algorithm).toBe(algorithm);
    expect(key.key.equals(publicKey)).toBe(true);
  });

  it.each([
    ['PEM', privatePem],
    ['file: of PKCS#8 DER', file(`${algorithm}-private.key`, privateDer)],
    ['data:;base64, of DER', `data:;base64,${privateDer.toString('base64')}`],
  ])(`reads the private key as %s, for ${algorithm}`, (_label, material) => {
    const key = privateKeyFrom(material);

    expect(key.algorithm).toBe(algorithm);
    expect(key.key.equals(privateKey)).toBe(true);
  });
});

describe('publicKeyFrom refuses', () => {
  it.each([
    ['RSA under 2048 bits', generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey, /at least 2048/],
    [
      'EC P-384',
      generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey,
      /RSA \(RS256\) or EC P-256/,
    ],
    ['Ed25519', generateKeyPairSync('ed25519').publicKey, /RSA \(RS256\) or EC P-256/],
  ])('%s', (_label, key, message) => {
    const pem = key.export({ format: 'pem', type: 'spki' }).toString();

    expect(() => publicKeyFrom(pem)).toThrow(message);
  });

  it('material that is no key, without quoting it', () => {
    expect(() => publicKeyFrom('not-a-key')).toThrow(
      new InvalidTokenKeyError('the token public key is neither PEM nor X.509 (SPKI) DER'),
    );
  });
});
