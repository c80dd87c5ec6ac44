import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { withExamples } from '../help-examples.ts';
import { integerParser, parseList } from '../option-parsers.ts';

/**
 * `ackline-admin namespaces create|list|delete`: a namespace's lifecycle, with pulsar-admin's
 * names and flags.
 *
 * @example
 * registerNamespaceLifecycleCommands(namespaces, context);
 * // $ ackline-admin namespaces create my-tenant/my-ns
 */
export function registerNamespaceLifecycleCommands(namespaces: Command, context: CliContext): void {
  registerCreate(namespaces, context);
  registerList(namespaces, context);
  registerDelete(namespaces, context);
}

function registerCreate(namespaces: Command, context: CliContext): void {
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
          await context
            .admin()
            .namespaces()
            .createNamespace(namespace, {
              ...(options.clusters ? { replicationClusters: options.clusters } : {}),
              ...(options.bundles !== undefined ? { bundles: options.bundles } : {}),
            });
          context.print(`Created namespace ${namespace}`);
        },
      ),
    'namespaces create my-tenant/my-ns',
    'namespaces create my-tenant/my-ns -c standalone -b 4',
  );
}

function registerList(namespaces: Command, context: CliContext): void {
  withExamples(
    namespaces
      .command('list')
      .description('List the namespaces of a tenant, one per line')
      .argument('<tenant>', 'tenant')
      .action(async (tenant: string) => {
        context.printList(await context.admin().namespaces().getNamespaces(tenant));
      }),
    'namespaces list my-tenant',
  );
}

function registerDelete(namespaces: Command, context: CliContext): void {
  withExamples(
    namespaces
      .command('delete')
      .description('Delete an empty namespace')
      .argument('<namespace>', 'tenant/namespace')
      .option('-f, --force', 'delete its topics too (the server refuses: 405)')
      .action(async (namespace: string, options: { readonly force?: boolean }) => {
        await context
          .admin()
          .namespaces()
          .deleteNamespace(namespace, options.force === true);
        context.print(`Deleted namespace ${namespace}`);
      }),
    'namespaces delete my-tenant/my-ns',
  );
}
