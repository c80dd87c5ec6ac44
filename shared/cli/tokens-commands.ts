import type { Command } from 'commander';
import { signToken } from '../adapters/hs256-tokens.ts';
import type { CliContext } from './cli-context.ts';
import { withExamples } from './help-examples.ts';
import { parseRelativeTimeSeconds } from './relative-time.ts';
import { findTokenSecret } from './token-secret.ts';

interface CreateTokenOptions {
  readonly subject: string;
  readonly expiryTime?: string;
  readonly secretKey?: string;
}

/**
 * `ackline-admin tokens ...`: mints HS256 tokens offline, as pulsar-admin `tokens`. Needs no server.
 *
 * @example
 * registerTokensCommands(program, context);
 * // $ ackline-admin tokens create --subject ops --expiry-time 30d
 */
export function registerTokensCommands(program: Command, context: CliContext): void {
  const tokens = program
    .command('tokens')
    .description('Create authentication tokens (offline, no server needed)');

  withExamples(
    tokens
      .command('create')
      .description(
        'Print a token (HS256 JWT) whose subject is the role. The secret is --secret-key, else ' +
          'ACKLINE_TOKEN_SECRET, else the file token-secret in ACKLINE_DATA_DIR (default ./.ackline)',
      )
      .requiredOption('-s, --subject <role>', 'the role the token authenticates')
      .option('-e, --expiry-time <duration>', 'lifetime, e.g. 30m, 1h, 30d, 1y (default: never expires)')
      .option(
        '--secret-key <secret>',
        'the signing secret (visible in the process list: prefer the environment)',
      )
      .action((options: CreateTokenOptions) => {
        const secret = findTokenSecret({ secretKey: options.secretKey, env: context.env, cwd: context.cwd });
        const exp =
          options.expiryTime === undefined
            ? undefined
            : Math.floor(context.nowMs() / 1000) + parseRelativeTimeSeconds(options.expiryTime);
        context.print(
          signToken(exp === undefined ? { sub: options.subject } : { sub: options.subject, exp }, secret),
        );
      }),
    'tokens create --subject ops --expiry-time 30d',
    'tokens create --subject admin --secret-key "$ACKLINE_TOKEN_SECRET"',
  );
}
