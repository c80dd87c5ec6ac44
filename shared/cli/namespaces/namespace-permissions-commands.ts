import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { withExamples } from '../help-examples.ts';
import { parseList } from '../option-parsers.ts';

/**
 * `ackline-admin namespaces grant-permission|revoke-permission|permissions`: the roles' actions on
 * every topic of a namespace, with pulsar-admin's names and flags.
 *
 * @example
 * registerNamespacePermissionsCommands(namespaces, context);
 * // $ ackline-admin namespaces grant-permission my-tenant/my-ns --role ops --actions produce,consume
 */
export function registerNamespacePermissionsCommands(namespaces: Command, context: CliContext): void {
  registerGrantPermission(namespaces, context);
  registerRevokePermission(namespaces, context);
  registerPermissions(namespaces, context);
}

function registerGrantPermission(namespaces: Command, context: CliContext): void {
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
          await context
            .admin()
            .namespaces()
            .grantPermissionOnNamespace(namespace, options.role, options.actions);
          context.print(
            `Granted ${options.actions.join(', ')} on namespace ${namespace} to role ${options.role}`,
          );
        },
      ),
    'namespaces grant-permission my-tenant/my-ns --role ops --actions produce,consume',
  );
}

function registerRevokePermission(namespaces: Command, context: CliContext): void {
  withExamples(
    namespaces
      .command('revoke-permission')
      .description('Revoke every action granted to a role on a namespace')
      .argument('<namespace>', 'tenant/namespace')
      .requiredOption('--role <role>', 'role (a token subject)')
      .action(async (namespace: string, options: { readonly role: string }) => {
        await context.admin().namespaces().revokePermissionsOnNamespace(namespace, options.role);
        context.print(`Revoked the permissions of role ${options.role} on namespace ${namespace}`);
      }),
    'namespaces revoke-permission my-tenant/my-ns --role ops',
  );
}

function registerPermissions(namespaces: Command, context: CliContext): void {
  withExamples(
    namespaces
      .command('permissions')
      .description('Show the permissions on a namespace (JSON: role -> actions)')
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        context.printJson(await context.admin().namespaces().getPermissions(namespace));
      }),
    'namespaces permissions my-tenant/my-ns',
  );
}
