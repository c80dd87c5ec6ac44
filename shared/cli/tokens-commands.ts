import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { signToken, type TokenClaims } from '../adapters/jose-tokens.ts';
import {
  InvalidTokenKeyError,
  privateKeyFrom,
  secretKeyFrom,
  type TokenAlgorithm,
  type TokenKey,
} from '../adapters/token-keys.ts';
import { type CliContext, CliError } from './cli-context.ts';
import { withExamples } from './help-examples.ts';
import { parseRelativeTimeSeconds } from './relative-time.ts';
import { findTokenSecret } from './token-secret.ts';

interface CreateTokenOptions {
  readonly subject: string;
  readonly expiryTime?: string;
  readonly secretKey?: string;
  readonly privateKey?: string;
  readonly signatureAlgorithm?: string;
  readonly audience?: string;
}

interface CreateSecretKeyOptions {
  readonly output?: string;
  readonly base64?: boolean;
}

interface CreateKeyPairOptions {
  readonly outputPrivateKey: string;
  readonly outputPublicKey: string;
  readonly signatureAlgorithm: string;
}

/** Bytes of a secret from `create-secret-key`: 256 bits, HS256's hash size (as Pulsar's). */
const SECRET_KEY_BYTES = 32;
const KEY_PAIR_ALGORITHMS: readonly TokenAlgorithm[] = ['RS256', 'ES256'];

/**
 * `ackline-admin tokens ...`: creates keys and tokens offline, as Pulsar's
 * `bin/pulsar tokens` tool. Needs no server. Keys are Pulsar's formats: a
 * secret key is raw bytes, a key pair is DER (PKCS#8 private, X.509 public);
 * every key option takes `file:///path`, `data:;base64,...`, PEM or base64.
 *
 * @example
 * registerTokensCommands(program, context);
 * // $ ackline-admin tokens create-key-pair --output-private-key my-private.key --output-public-key my-public.key
 * // $ ackline-admin tokens create --private-key file:///keys/my-private.key --subject ops --expiry-time 30d
 */
export function registerTokensCommands(program: Command, context: CliContext): void {
  const tokens = program
    .command('tokens')
    .description('Create authentication keys and tokens (offline, no server needed)');
  registerCreateToken(tokens, context);
  registerCreateSecretKey(tokens, context);
  registerCreateKeyPair(tokens, context);
}

function registerCreateToken(tokens: Command, context: CliContext): void {
  withExamples(
    tokens
      .command('create')
      .description(
        'Print a token (JWT) whose subject is the role. Signed with --private-key (RS256 or ES256, by ' +
          'the key), else with the secret (HS256): --secret-key, else ACKLINE_TOKEN_SECRET, else the ' +
          'file token-secret in ACKLINE_DATA_DIR (default ./.ackline)',
      )
      .requiredOption('-s, --subject <role>', 'the role the token authenticates')
      .option('-e, --expiry-time <duration>', 'lifetime, e.g. 30m, 1h, 30d, 1y (default: never expires)')
      .option(
        '--secret-key <key>',
        'the signing secret: text, data:;base64,<base64> or file:///path (inline values are visible ' +
          'in the process list: prefer the environment or a file)',
      )
      .option(
        '--private-key <key>',
        'the signing private key: file:///path, data:;base64,<base64 DER>, PEM or base64 DER',
      )
      .option(
        '-a, --signature-algorithm <alg>',
        'checked against the key: HS256 for a secret, RS256 for RSA, ES256 for EC P-256',
      )
      .option('--audience <audience>', 'the aud claim, for a server with ACKLINE_TOKEN_AUDIENCE')
      .action(async (options: CreateTokenOptions) => {
        const key = signingKeyOf(options, context);
        const claims: TokenClaims = {
          sub: options.subject,
          ...(options.expiryTime === undefined
            ? {}
            : { exp: Math.floor(context.nowMs() / 1000) + parseRelativeTimeSeconds(options.expiryTime) }),
          ...(options.audience === undefined ? {} : { aud: options.audience }),
        };
        if (claims.sub.length === 0) throw new CliError('--subject must not be empty');
        context.print(await signToken(claims, key));
      }),
    'tokens create --subject ops --expiry-time 30d',
    'tokens create --subject admin --secret-key "$ACKLINE_TOKEN_SECRET"',
    'tokens create --subject ops --private-key file:///keys/my-private.key',
  );
}

/** The key `tokens create` signs with: --private-key, else the secret; checked against --signature-algorithm. */
function signingKeyOf(options: CreateTokenOptions, context: CliContext): TokenKey {
  if (options.privateKey !== undefined && options.secretKey !== undefined) {
    throw new CliError('Give --private-key or --secret-key, not both');
  }
  const key = keyOrCliError(() =>
    options.privateKey === undefined
      ? secretKeyFrom(findTokenSecret({ secretKey: options.secretKey, env: context.env, cwd: context.cwd }))
      : privateKeyFrom(options.privateKey),
  );
  if (options.signatureAlgorithm !== undefined && options.signatureAlgorithm !== key.algorithm) {
    throw new CliError(
      `--signature-algorithm ${options.signatureAlgorithm} does not match the key, which signs ${key.algorithm}`,
    );
  }
  return key;
}

function registerCreateSecretKey(tokens: Command, context: CliContext): void {
  withExamples(
    tokens
      .command('create-secret-key')
      .description(
        `Create a random ${SECRET_KEY_BYTES}-byte HS256 secret key. With --output, written raw (or base64 ` +
          'with --base64) to the file (mode 0600); else printed as base64. Give it to the server as ' +
          'ACKLINE_TOKEN_SECRET=file:///path or data:;base64,<base64>',
      )
      .option('-o, --output <file>', 'write the key to this file instead of printing it')
      .option('-b, --base64', 'write the file as base64 text rather than raw bytes')
      .action((options: CreateSecretKeyOptions) => {
        const secret = randomBytes(SECRET_KEY_BYTES);
        if (options.output === undefined) {
          context.print(secret.toString('base64'));
          return;
        }
        writeKeyFile(context, options.output, options.base64 ? `${secret.toString('base64')}\n` : secret);
      }),
    'tokens create-secret-key --output my-secret.key',
    'tokens create-secret-key --output my-secret.key --base64',
  );
}

function registerCreateKeyPair(tokens: Command, context: CliContext): void {
  withExamples(
    tokens
      .command('create-key-pair')
      .description(
        'Create a key pair for RS256 (RSA 2048) or ES256 (EC P-256) tokens, written as DER: the private ' +
          'key (PKCS#8, mode 0600) signs with tokens create --private-key; the public key (X.509) goes to ' +
          'the server as ACKLINE_TOKEN_PUBLIC_KEY=file:///path, or base64 in Secrets Manager or SSM',
      )
      .requiredOption('--output-private-key <file>', 'where to write the private key')
      .requiredOption('--output-public-key <file>', 'where to write the public key')
      .option('-a, --signature-algorithm <alg>', 'RS256 or ES256', 'RS256')
      .action((options: CreateKeyPairOptions) => {
        const algorithm = options.signatureAlgorithm.toUpperCase() as TokenAlgorithm;
        if (!KEY_PAIR_ALGORITHMS.includes(algorithm)) {
          throw new CliError(
            `--signature-algorithm must be ${KEY_PAIR_ALGORITHMS.join(' or ')}, got '${options.signatureAlgorithm}'`,
          );
        }
        const pair =
          algorithm === 'RS256'
            ? generateKeyPairSync('rsa', { modulusLength: 2048 })
            : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
        writeKeyFile(
          context,
          options.outputPrivateKey,
          pair.privateKey.export({ format: 'der', type: 'pkcs8' }),
        );
        writeKeyFile(
          context,
          options.outputPublicKey,
          pair.publicKey.export({ format: 'der', type: 'spki' }),
          0o644,
        );
      }),
    'tokens create-key-pair --output-private-key my-private.key --output-public-key my-public.key',
    'tokens create-key-pair -a ES256 --output-private-key ec-private.key --output-public-key ec-public.key',
  );
}

function keyOrCliError(read: () => TokenKey): TokenKey {
  try {
    return read();
  } catch (error) {
    if (error instanceof InvalidTokenKeyError) throw new CliError(error.message, { cause: error });
    throw error;
  }
}

/** Writes a key file (relative to the CLI's cwd), refusing to overwrite one: a key lost is every token lost. */
function writeKeyFile(context: CliContext, file: string, content: string | Buffer, mode = 0o600): void {
  const path = resolve(context.cwd, file);
  try {
    writeFileSync(path, content, { mode, flag: 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      code === 'EEXIST'
        ? `${path} exists: not overwritten`
        : `${path} cannot be written (${code ?? String(error)})`,
      { cause: error },
    );
  }
}
