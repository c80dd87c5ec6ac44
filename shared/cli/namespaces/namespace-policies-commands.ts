import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { withExamples } from '../help-examples.ts';
import { type RetentionOptions, retentionOf, ttlSecondsOf } from '../policy-options.ts';

/**
 * `ackline-admin namespaces policies|set-retention|get-retention|remove-retention|set-message-ttl|get-message-ttl|remove-message-ttl`:
 * a namespace's policies, retention and message TTL, with pulsar-admin's names and flags.
 *
 * @example
 * registerNamespacePoliciesCommands(namespaces, context);
 * // $ ackline-admin namespaces set-retention my-tenant/my-ns --size 10G --time 3d
 */
export function registerNamespacePoliciesCommands(namespaces: Command, context: CliContext): void {
  registerPolicies(namespaces, context);
  registerSetRetention(namespaces, context);
  registerGetRetention(namespaces, context);
  registerRemoveRetention(namespaces, context);
  registerSetMessageTtl(namespaces, context);
  registerGetMessageTtl(namespaces, context);
  registerRemoveMessageTtl(namespaces, context);
}

function registerPolicies(namespaces: Command, context: CliContext): void {
  withExamples(
    namespaces
      .command('policies')
      .description("Show a namespace's policies (JSON)")
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        context.printJson(await context.admin().namespaces().getPolicies(namespace));
      }),
    'namespaces policies my-tenant/my-ns',
  );
}

function registerSetRetention(namespaces: Command, context: CliContext): void {
  withExamples(
    namespaces
      .command('set-retention')
      .description('Set the retention of a namespace: how long and how much acknowledged data is kept')
      .argument('<namespace>', 'tenant/namespace')
      .requiredOption('-s, --size <size>', 'retention size, e.g. 10M, 16G, 3T, or -1 for no limit')
      .requiredOption('-t, --time <time>', 'retention time, e.g. 100m, 3h, 2d, 5w, or -1 for no limit')
      .action(async (namespace: string, options: RetentionOptions) => {
        const retention = retentionOf(options);
        await context.admin().namespaces().setRetention(namespace, retention);
        context.print(
          `Set the retention of ${namespace} to ${retention.retentionTimeInMinutes} minutes and ${retention.retentionSizeInMB} MB`,
        );
      }),
    'namespaces set-retention my-tenant/my-ns --size 10G --time 3d',
  );
}

function registerGetRetention(namespaces: Command, context: CliContext): void {
  withExamples(
    namespaces
      .command('get-retention')
      .description("Show a namespace's retention (JSON; null when none is set)")
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        context.printJson((await context.admin().namespaces().getRetention(namespace)) ?? null);
      }),
    'namespaces get-retention my-tenant/my-ns',
  );
}

function registerRemoveRetention(namespaces: Command, context: CliContext): void {
  withExamples(
    namespaces
      .command('remove-retention')
      .description("Remove a namespace's retention")
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        await context.admin().namespaces().removeRetention(namespace);
        context.print(`Removed the retention of ${namespace}`);
      }),
    'namespaces remove-retention my-tenant/my-ns',
  );
}

function registerSetMessageTtl(namespaces: Command, context: CliContext): void {
  withExamples(
    namespaces
      .command('set-message-ttl')
      .description('Set the message TTL of a namespace: unacknowledged messages older than it expire')
      .argument('<namespace>', 'tenant/namespace')
      // pulsar-admin's -ttl is read as --messageTTL (see run's MULTI_LETTER_FLAGS).
      .requiredOption('--messageTTL <ttl>', 'TTL, e.g. 3600 (seconds), 1h, 2d; 0 for none (also -ttl)')
      .action(async (namespace: string, options: { readonly messageTTL: string }) => {
        const seconds = ttlSecondsOf(options.messageTTL);
        await context.admin().namespaces().setNamespaceMessageTTL(namespace, seconds);
        context.print(`Set the message TTL of ${namespace} to ${seconds} s`);
      }),
    'namespaces set-message-ttl my-tenant/my-ns --messageTTL 1h',
    'namespaces set-message-ttl my-tenant/my-ns -ttl 3600',
  );
}

function registerGetMessageTtl(namespaces: Command, context: CliContext): void {
  withExamples(
    namespaces
      .command('get-message-ttl')
      .description("Show a namespace's message TTL in seconds (JSON; null when none is set)")
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        context.printJson((await context.admin().namespaces().getNamespaceMessageTTL(namespace)) ?? null);
      }),
    'namespaces get-message-ttl my-tenant/my-ns',
  );
}

function registerRemoveMessageTtl(namespaces: Command, context: CliContext): void {
  withExamples(
    namespaces
      .command('remove-message-ttl')
      .description("Remove a namespace's message TTL")
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        await context.admin().namespaces().removeNamespaceMessageTTL(namespace);
        context.print(`Removed the message TTL of ${namespace}`);
      }),
    'namespaces remove-message-ttl my-tenant/my-ns',
  );
}
