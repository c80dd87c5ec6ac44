import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { signToken } from '../adapters/jose-tokens.ts';
import { secretKeyFrom } from '../adapters/token-keys.ts';
import { findTokenSecret } from './token-secret.ts';

const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8080';
const DEFAULT_DATA_DIR = '.ackline';
/** A token minted for the local stack lives this long: one command's worth. */
const LOCAL_TOKEN_SECONDS = 300;

/** Where the CLI sends its calls, and with which token. */
export interface AdminConnection {
  readonly url: string;
  readonly token: string | undefined;
}

/** What {@link resolveAdminConnection} reads. */
export interface AdminConnectionSources {
  readonly adminUrl: string | undefined;
  readonly authToken: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly nowMs: number;
}

/**
 * The admin URL and token, in this order: `--admin-url` / `--auth-token`, then
 * `ACKLINE_ADMIN_URL` / `ACKLINE_AUTH_TOKEN`, then the embedded stack of the data directory
 * (`ACKLINE_DATA_DIR`, default `./.ackline`): the gateway its `endpoints.json` names, and a token
 * minted with its `token-secret` (or `ACKLINE_TOKEN_SECRET`) for the first of
 * `ACKLINE_SUPERUSER_ROLES` (default `admin`), valid 5 minutes. A token is minted only for that
 * stack's own URL, so a local secret never signs a call to another server. Last, the URL
 * http://127.0.0.1:8080 and no token.
 *
 * @example
 * const { url, token } = await resolveAdminConnection({ adminUrl: undefined, authToken: undefined, env: process.env, cwd: process.cwd(), nowMs: Date.now() });
 */
export async function resolveAdminConnection(sources: AdminConnectionSources): Promise<AdminConnection> {
  const { env } = sources;
  const dataDir = resolve(sources.cwd, env.ACKLINE_DATA_DIR || DEFAULT_DATA_DIR);
  const localUrl = localGatewayUrl(dataDir);
  const url = sources.adminUrl || env.ACKLINE_ADMIN_URL || localUrl || DEFAULT_ADMIN_URL;
  const given = sources.authToken || env.ACKLINE_AUTH_TOKEN;
  if (given || localUrl === undefined || !sameOrigin(url, localUrl))
    return { url, token: given || undefined };
  let secret: string;
  try {
    secret = findTokenSecret({ secretKey: undefined, env, cwd: sources.cwd });
  } catch {
    return { url, token: undefined };
  }
  const role = (env.ACKLINE_SUPERUSER_ROLES || 'admin').split(',')[0]?.trim() || 'admin';
  const token = await signToken(
    { sub: role, exp: Math.floor(sources.nowMs / 1000) + LOCAL_TOKEN_SECONDS },
    secretKeyFrom(secret),
  );
  return { url, token };
}

/** The gateway URL in the data directory's endpoints.json, when a stack wrote one. */
function localGatewayUrl(dataDir: string): string | undefined {
  try {
    const endpoints = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as {
      gateway?: unknown;
    };
    return typeof endpoints.gateway === 'string' ? endpoints.gateway : undefined;
  } catch {
    return undefined;
  }
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
