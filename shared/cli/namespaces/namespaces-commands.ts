import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { registerSubscriptionLimitCommands } from '../subscription-limit-commands.ts';
import { registerNamespaceLifecycleCommands } from './namespace-lifecycle-commands.ts';
import { registerNamespacePermissionsCommands } from './namespace-permissions-commands.ts';
import { registerNamespacePoliciesCommands } from './namespace-policies-commands.ts';

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
  registerNamespaceLifecycleCommands(namespaces, context);
  registerNamespacePoliciesCommands(namespaces, context);
  registerSubscriptionLimitCommands(namespaces, context, 'namespaces');
  registerNamespacePermissionsCommands(namespaces, context);
}
