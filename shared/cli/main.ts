import { Command, CommanderError, Option } from 'commander';
import { AcklineAdmin } from '../client/admin-client.ts';
import { AcklineAdminError } from '../client/errors.ts';
import { AcklineError } from '../domain/errors.ts';
import { type AdminConnection, resolveAdminConnection } from './admin-connection.ts';
import { type CliContext, CliError, type CliIo } from './cli-context.ts';
import { registerNamespacesCommands } from './namespaces/namespaces-commands.ts';
import { registerTenantsCommands } from './tenants-commands.ts';
import { registerTokensCommands } from './tokens-commands.ts';
import { registerTopicsCommands } from './topics/topics-commands.ts';

export type { CliIo, TextSink } from './cli-context.ts';

const PROGRAM = 'ackline-admin';
/** Command groups whose commands take `--output json|text` (tokens has its own `--output <file>`). */
const OUTPUT_GROUPS = ['topics', 'namespaces', 'tenants'];

interface GlobalOptions {
  readonly adminUrl?: string;
  readonly authToken?: string;
}

/**
 * pulsar-admin flags of one dash and several letters, which commander would read as several short
 * flags (`-ap` as `-a -p`), in their long form.
 */
const MULTI_LETTER_FLAGS: Readonly<Record<string, string>> = {
  '-ap': '--applied',
  // namespaces set-message-ttl
  '-ttl': '--messageTTL',
};

function longFormOfMultiLetterFlag(arg: string): string {
  return MULTI_LETTER_FLAGS[arg] ?? arg;
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
    await createProgram(io).parseAsync(argv.map(longFormOfMultiLetterFlag), { from: 'user' });
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
    .option(
      '--admin-url <url>',
      'admin REST API URL (env ACKLINE_ADMIN_URL; default: the embedded stack of ACKLINE_DATA_DIR or ./.ackline, from its endpoints.json, else http://127.0.0.1:8080)',
    )
    .option(
      '--auth-token <token>',
      'token sent as "Authorization: Bearer" (env ACKLINE_AUTH_TOKEN; default for the embedded stack\'s own URL: one minted with its token-secret for the first superuser role)',
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .configureHelp({ showGlobalOptions: true, sortSubcommands: true })
    .showHelpAfterError(`(run '${PROGRAM} <command> --help' for usage)`);

  let admin: AcklineAdmin | undefined;
  let connection: AdminConnection | undefined;
  let json = false;
  const results: unknown[] = [];
  const context: CliContext = {
    admin: () => {
      if (!connection) throw new CliError('No admin connection was resolved');
      admin ??= buildAdmin(connection, io);
      return admin;
    },
    print: (text) => (json ? results.push({ message: text }) : io.stdout.write(`${text}\n`)),
    printJson: (value) => (json ? results.push(value ?? null) : writeJson(io, value)),
    printList: (items) => {
      if (json) results.push([...items]);
      else for (const item of items) io.stdout.write(`${item}\n`);
    },
    printJsonEach: (values) => {
      if (json) results.push([...values]);
      else for (const value of values) writeJson(io, value);
    },
    env: io.env,
    cwd: io.cwd ?? process.cwd(),
    nowMs: io.nowMs ?? Date.now,
  };
  registerTopicsCommands(program, context);
  registerNamespacesCommands(program, context);
  registerTenantsCommands(program, context);
  registerTokensCommands(program, context);
  for (const group of program.commands.filter((command) => OUTPUT_GROUPS.includes(command.name()))) {
    for (const command of group.commands) {
      command.addOption(
        new Option('--output <format>', 'json: one JSON document on stdout; text: lines for people')
          .choices(['json', 'text'])
          .default('text'),
      );
    }
  }
  program.hook('preAction', async (_program, actionCommand) => {
    json = actionCommand.opts<{ output?: string }>().output === 'json';
    if (!OUTPUT_GROUPS.includes(actionCommand.parent?.name() ?? '')) return;
    const options = program.opts<GlobalOptions>();
    connection = await resolveAdminConnection({
      adminUrl: options.adminUrl,
      authToken: options.authToken,
      env: io.env,
      cwd: context.cwd,
      nowMs: context.nowMs(),
    });
  });
  program.hook('postAction', () => {
    // JSON output is one document: the command's one result, or its results in an array.
    if (json) writeJson(io, results.length === 1 ? results[0] : results);
  });
  return program;
}

function buildAdmin(connection: AdminConnection, io: CliIo): AcklineAdmin {
  const builder = AcklineAdmin.builder().serviceHttpUrl(connection.url).authToken(connection.token);
  return (io.fetch ? builder.fetch(io.fetch) : builder).build();
}

function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value ?? null, null, 2)}\n`);
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
