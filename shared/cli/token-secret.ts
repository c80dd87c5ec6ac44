import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CliError } from './cli-context.ts';

/** Where {@link findTokenSecret} looks, in order. */
export interface TokenSecretSources {
  /** `--secret-key`. */
  readonly secretKey: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

const DEFAULT_DATA_DIR = '.ackline';

/**
 * The secret that signs tokens, as the server finds it: `--secret-key`, else `ACKLINE_TOKEN_SECRET`,
 * else the file `token-secret` that the local stack writes in its data directory
 * (`ACKLINE_DATA_DIR`, default `./.ackline`).
 *
 * @throws CliError naming every place it looked.
 * @example
 * const secret = findTokenSecret({ secretKey: undefined, env: process.env, cwd: process.cwd() });
 */
export function findTokenSecret(sources: TokenSecretSources): string {
  if (sources.secretKey) return sources.secretKey;
  const fromEnv = sources.env.ACKLINE_TOKEN_SECRET;
  if (fromEnv) return fromEnv;
  const file = join(resolve(sources.cwd, sources.env.ACKLINE_DATA_DIR || DEFAULT_DATA_DIR), 'token-secret');
  let problem: string;
  try {
    const secret = readFileSync(file, 'utf8').trim();
    if (secret) return secret;
    problem = 'is empty';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    problem = code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? String(error)})`;
  }
  throw new CliError(
    `No token secret found: --secret-key not given, ACKLINE_TOKEN_SECRET not set, and ${file} ${problem}`,
  );
}
