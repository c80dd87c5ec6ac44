import type { Command } from 'commander';
import type { CliContext } from './cli-context.ts';
import { withExamples } from './help-examples.ts';
import { integerParser, parseList } from './option-parsers.ts';
import { type RetentionOptions, retentionOf, ttlSecondsOf } from './policy-options.ts';

/**
 * `ackline-admin namespaces ...`: the pulsar-admin `namespaces` commands ackline serves (create,
 * list, delete, policies, permissions, retention, message TTL), same names and flags.
 *
 * @example
 * registerNamespacesCommands(program, context);
 * // $ ackline-admin namespaces grant-permission my-tenant/my-ns --role ops --actions produce,consume
 */
export function registerNamespacesCommands(program: Command, context: CliContext): void {
  const namespaces = program.command('namespaces').description('Operations on namespaces');
  const namespacesApi = () => context.admin().namespaces();

  withExamples(
    namespaces
      .command('create')
      .description('Create a namespace in an existing tenant')
      .argument('<namespace>', 'tenant/namespace')
      .option(
        '-c, --clusters <clusters>',
        'comma-separated replication clusters (ackline has one)',
        parseList,
      )
      .option(
        '-b, --bundles <count>',
        'number of bundles (accepted for pulsar-admin; unused)',
        integerParser(1),
      )
      .action(
        async (
          namespace: string,
          options: { readonly clusters?: readonly string[]; readonly bundles?: number },
        ) => {
          await namespacesApi().createNamespace(namespace, {
            ...(options.clusters ? { replicationClusters: options.clusters } : {}),
            ...(options.bundles !== undefined ? { bundles: options.bundles } : {}),
          });
          context.print(`Created namespace ${namespace}`);
        },
      ),
    'namespaces create my-tenant/my-ns',
    'namespaces create my-tenant/my-ns -c standalone -b 4',
  );

  withExamples(
    namespaces
      .command('list')
      .description('List the namespaces of a tenant, one per line')
      .argument('<tenant>', 'tenant')
      .action(async (tenant: string) => {
        context.printList(await namespacesApi().getNamespaces(tenant));
      }),
    'namespaces list my-tenant',
  );

  withExamples(
    namespaces
      .command('delete')
      .description('Delete an empty namespace')
      .argument('<namespace>', 'tenant/namespace')
      .option('-f, --force', 'delete its topics too (the server refuses: 405)')
      .action(async (namespace: string, options: { readonly force?: boolean }) => {
        await namespacesApi().deleteNamespace(namespace, options.force === true);
        context.print(`Deleted namespace ${namespace}`);
      }),
    'namespaces delete my-tenant/my-ns',
  );

  withExamples(
    namespaces
      .command('policies')
      .description("Show a namespace's policies (JSON)")
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        context.printJson(await namespacesApi().getPolicies(namespace));
      }),
    'namespaces policies my-tenant/my-ns',
  );

  withExamples(
    namespaces
      .command('set-retention')
      .description('Set the retention of a namespace: how long and how much acknowledged data is kept')
      .argument('<namespace>', 'tenant/namespace')
      .requiredOption('-s, --size <size>', 'retention size, e.g. 10M, 16G, 3T, or -1 for no limit')
      .requiredOption('-t, --time <time>', 'retention time, e.g. 100m, 3h, 2d, 5w, or -1 for no limit')
      .action(async (namespace: string, options: RetentionOptions) => {
        const retention = retentionOf(options);
        await namespacesApi().setRetention(namespace, retention);
        context.print(
          `Set the retention of ${namespace} to ${retention.retentionTimeInMinutes} minutes and ${retention.retentionSizeInMB} MB`,
        );
      }),
    'namespaces set-retention my-tenant/my-ns --size 10G --time 3d',
  );

  withExamples(
    namespaces
      .command('get-retention')
      .description("Show a namespace's retention (JSON; null when none is set)")
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        context.printJson((await namespacesApi().getRetention(namespace)) ?? null);
      }),
    'namespaces get-retention my-tenant/my-ns',
  );

  withExamples(
    namespaces
      .command('remove-retention')
      .description("Remove a namespace's retention")
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        await namespacesApi().removeRetention(namespace);
        context.print(`Removed the retention of ${namespace}`);
      }),
    'namespaces remove-retention my-tenant/my-ns',
  );

  withExamples(
    namespaces
      .command('set-message-ttl')
      .description('Set the message TTL of a namespace: unacknowledged messages older than it expire')
      .argument('<namespace>', 'tenant/namespace')
      // pulsar-admin's -ttl is read as --messageTTL (see run's MULTI_LETTER_FLAGS).
      .requiredOption('--messageTTL <ttl>', 'TTL, e.g. 3600 (seconds), 1h, 2d; 0 for none (also -ttl)')
      .action(async (namespace: string, options: { readonly messageTTL: string }) => {
        const seconds = ttlSecondsOf(options.messageTTL);
        await namespacesApi().setNamespaceMessageTTL(namespace, seconds);
        context.print(`Set the message TTL of ${namespace} to ${seconds} s`);
      }),
    'namespaces set-message-ttl my-tenant/my-ns --messageTTL 1h',
    'namespaces set-message-ttl my-tenant/my-ns -ttl 3600',
  );

  withExamples(
    namespaces
      .command('get-message-ttl')
      .description("Show a namespace's message TTL in seconds (JSON; null when none is set)")
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        context.printJson((await namespacesApi().getNamespaceMessageTTL(namespace)) ?? null);
      }),
    'namespaces get-message-ttl my-tenant/my-ns',
  );

  withExamples(
    namespaces
      .command('remove-message-ttl')
      .description("Remove a namespace's message TTL")
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        await namespacesApi().removeNamespaceMessageTTL(namespace);
        context.print(`Removed the message TTL of ${namespace}`);
      }),
    'namespaces remove-message-ttl my-tenant/my-ns',
  );

  withExamples(
    namespaces
      .command('grant-permission')
      .description('Grant a role actions on every topic of a namespace')
      .argument('<namespace>', 'tenant/namespace')
      .requiredOption('--role <role>', 'role (a token subject)')
      .requiredOption(
        '--actions <actions>',
        'comma-separated: produce, consume, acknowledge_message',
        parseList,
      )
      .action(
        async (
          namespace: string,
          options: { readonly role: string; readonly actions: readonly string[] },
        ) => {
          await namespacesApi().grantPermissionOnNamespace(namespace, options.role, options.actions);
          context.print(
            `Granted ${options.actions.join(', ')} on namespace ${namespace} to role ${options.role}`,
          );
        },
      ),
    'namespaces grant-permission my-tenant/my-ns --role ops --actions produce,consume',
  );

  withExamples(
    namespaces
      .command('revoke-permission')
      .description('Revoke every action granted to a role on a namespace')
      .argument('<namespace>', 'tenant/namespace')
      .requiredOption('--role <role>', 'role (a token subject)')
      .action(async (namespace: string, options: { readonly role: string }) => {
        await namespacesApi().revokePermissionsOnNamespace(namespace, options.role);
        context.print(`Revoked the permissions of role ${options.role} on namespace ${namespace}`);
      }),
    'namespaces revoke-permission my-tenant/my-ns --role ops',
  );

  withExamples(
    namespaces
      .command('permissions')
      .description('Show the permissions on a namespace (JSON: role -> actions)')
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        context.printJson(await namespacesApi().getPermissions(namespace));
      }),
    'namespaces permissions my-tenant/my-ns',
  );
}
