import { Command, CommanderError } from 'commander';
import { AcklineAdmin } from '../client/admin-client.ts';
import { AcklineAdminError } from '../client/errors.ts';
import { AcklineError } from '../domain/errors.ts';
import { type CliContext, CliError, type CliIo } from './cli-context.ts';
import { registerNamespacesCommands } from './namespaces-commands.ts';
import { registerTokensCommands } from './tokens-commands.ts';
import { registerTopicsCommands } from './topics-commands.ts';

export type { CliIo, TextSink } from './cli-context.ts';

const PROGRAM = 'ackline-admin';
const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8080';

interface GlobalOptions {
  readonly adminUrl?: string;
  readonly authToken?: string;
}

/**
 * Runs `ackline-admin` with `argv` (the arguments after the program name) and resolves to the exit
 * code: 0 on success, 1 on failure with one line on stderr (`ackline-admin: 412 Precondition Failed:
 * <reason>`), never a stack trace. Nothing is read from `process`: tests pass fakes in `io`.
 *
 * @example
 * process.exitCode = await run(process.argv.slice(2), {
 *   stdout: process.stdout,
 *   stderr: process.stderr,
 *   env: process.env,
 * });
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    await createProgram(io).parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    return reportFailure(error, io);
  }
}

/**
 * The commander program, with every command group registered. Errors propagate to the caller
 * (commander's own as `CommanderError`, after it has printed them).
 *
 * @example
 * await createProgram({ stdout: process.stdout, stderr: process.stderr, env: process.env }).parseAsync(['topics', 'list', 'public/default'], { from: 'user' });
 */
export function createProgram(io: CliIo): Command {
  const program = new Command(PROGRAM)
    .description(
      'Administer ackline, Apache Pulsar subscription semantics on AWS serverless, through its Pulsar-compatible admin REST API',
    )
    .option('--admin-url <url>', `admin REST API URL (env ACKLINE_ADMIN_URL, default ${DEFAULT_ADMIN_URL})`)
    .option('--auth-token <token>', 'token sent as "Authorization: Bearer" (env ACKLINE_AUTH_TOKEN)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .configureHelp({ showGlobalOptions: true, sortSubcommands: true })
    .showHelpAfterError(`(run '${PROGRAM} <command> --help' for usage)`);

  let admin: AcklineAdmin | undefined;
  const context: CliContext = {
    admin: () => {
      admin ??= buildAdmin(program.opts<GlobalOptions>(), io);
      return admin;
    },
    print: (text) => io.stdout.write(`${text}\n`),
    printJson: (value) => io.stdout.write(`${JSON.stringify(value ?? null, null, 2)}\n`),
    env: io.env,
    cwd: io.cwd ?? process.cwd(),
    nowMs: io.nowMs ?? Date.now,
  };
  registerTopicsCommands(program, context);
  registerNamespacesCommands(program, context);
  registerTokensCommands(program, context);
  return program;
}

function buildAdmin(options: GlobalOptions, io: CliIo): AcklineAdmin {
  const builder = AcklineAdmin.builder()
    .serviceHttpUrl(options.adminUrl || io.env.ACKLINE_ADMIN_URL || DEFAULT_ADMIN_URL)
    .authToken(options.authToken || io.env.ACKLINE_AUTH_TOKEN);
  return (io.fetch ? builder.fetch(io.fetch) : builder).build();
}

function reportFailure(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    // Commander has printed its message (or the help); keep its code: 0 for --help, 1 otherwise.
    return error.exitCode;
  }
  if (error instanceof AcklineAdminError || error instanceof CliError || error instanceof AcklineError) {
    io.stderr.write(`${PROGRAM}: ${error.message}\n`);
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`${PROGRAM}: unexpected error: ${message}\n`);
  if (io.env.ACKLINE_DEBUG && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  return 1;
}
