import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { withExamples } from '../help-examples.ts';
import { parseList } from '../option-parsers.ts';
import { fullName, TOPIC_ARGUMENT } from './topic-arguments.ts';

interface PermissionOptions {
  readonly role: string;
  readonly actions: readonly string[];
}

/**
 * `ackline-admin topics grant-permission|revoke-permission|permissions`: the roles' actions on a
 * topic, with pulsar-admin's names and flags.
 *
 * @example
 * registerTopicPermissionsCommands(topics, context);
 * // $ ackline-admin topics grant-permission my-tenant/my-ns/orders --role ops --actions consume
 */
export function registerTopicPermissionsCommands(topics: Command, context: CliContext): void {
  registerGrantPermission(topics, context);
  registerRevokePermission(topics, context);
  registerPermissions(topics, context);
}

function registerGrantPermission(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('grant-permission')
      .description('Grant a role actions on a topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('--role <role>', 'role (a token subject)')
      .requiredOption(
        '--actions <actions>',
        'comma-separated: produce, consume, acknowledge_message',
        parseList,
      )
      .action(async (topic: string, options: PermissionOptions) => {
        await context.admin().topics().grantPermission(topic, options.role, options.actions);
        context.print(`Granted ${options.actions.join(', ')} on ${fullName(topic)} to role ${options.role}`);
      }),
    'topics grant-permission my-tenant/my-ns/orders --role ops --actions consume,acknowledge_message',
  );
}

function registerRevokePermission(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('revoke-permission')
      .description('Revoke every action granted to a role on a topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('--role <role>', 'role (a token subject)')
      .action(async (topic: string, options: { readonly role: string }) => {
        await context.admin().topics().revokePermissions(topic, options.role);
        context.print(`Revoked the permissions of role ${options.role} on ${fullName(topic)}`);
      }),
    'topics revoke-permission my-tenant/my-ns/orders --role ops',
  );
}

function registerPermissions(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('permissions')
      .description('Show the permissions on a topic (JSON: role -> actions)')
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        context.printJson(await context.admin().topics().getPermissions(topic));
      }),
    'topics permissions my-tenant/my-ns/orders',
  );
}
