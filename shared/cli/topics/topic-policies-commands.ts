import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { withExamples } from '../help-examples.ts';
import { type RetentionOptions, retentionOf, ttlSecondsOf } from '../policy-options.ts';
import { fullName, TOPIC_ARGUMENT } from './topic-arguments.ts';

interface AppliedOption {
  readonly applied?: boolean;
}

/**
 * `ackline-admin topics set-retention|get-retention|remove-retention|set-message-ttl|get-message-ttl|remove-message-ttl`:
 * a topic's own retention and message TTL, over its namespace's, with pulsar-admin's names and flags.
 *
 * @example
 * registerTopicPoliciesCommands(topics, context);
 * // $ ackline-admin topics set-retention my-tenant/my-ns/orders -s 10G -t 3d
 */
export function registerTopicPoliciesCommands(topics: Command, context: CliContext): void {
  registerSetRetention(topics, context);
  registerGetRetention(topics, context);
  registerRemoveRetention(topics, context);
  registerSetMessageTtl(topics, context);
  registerGetMessageTtl(topics, context);
  registerRemoveMessageTtl(topics, context);
}

function registerSetRetention(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('set-retention')
      .description("Set a topic's own retention: how long and how much acknowledged data is kept")
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --size <size>', 'retention size, e.g. 10M, 16G, 3T, or -1 for no limit')
      .requiredOption('-t, --time <time>', 'retention time, e.g. 100m, 3h, 2d, 5w, or -1 for no limit')
      .action(async (topic: string, options: RetentionOptions) => {
        const retention = retentionOf(options);
        await context.admin().topics().setRetention(topic, retention);
        context.print(
          `Set the retention of ${fullName(topic)} to ${retention.retentionTimeInMinutes} minutes and ${retention.retentionSizeInMB} MB`,
        );
      }),
    'topics set-retention my-tenant/my-ns/orders --size 10G --time 3d',
  );
}

function registerGetRetention(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('get-retention')
      .description("Show a topic's own retention, or with --applied the one in force (JSON; null when none)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .option(
        '--applied',
        'the retention in force: the topic’s, else its namespace’s (pulsar-admin’s -ap works too)',
      )
      .action(async (topic: string, options: AppliedOption) => {
        context.printJson(
          (await context
            .admin()
            .topics()
            .getRetention(topic, options.applied ?? false)) ?? null,
        );
      }),
    'topics get-retention my-tenant/my-ns/orders --applied',
  );
}

function registerRemoveRetention(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('remove-retention')
      .description("Remove a topic's own retention (its namespace's applies again)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        await context.admin().topics().removeRetention(topic);
        context.print(`Removed the retention of ${fullName(topic)}`);
      }),
    'topics remove-retention my-tenant/my-ns/orders',
  );
}

function registerSetMessageTtl(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('set-message-ttl')
      .description("Set a topic's own message TTL: unacknowledged messages older than it expire")
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-t, --ttl <ttl>', 'TTL, e.g. 3600 (seconds), 1h, 2d; 0 for none')
      .action(async (topic: string, options: { readonly ttl: string }) => {
        const seconds = ttlSecondsOf(options.ttl);
        await context.admin().topics().setMessageTTL(topic, seconds);
        context.print(`Set the message TTL of ${fullName(topic)} to ${seconds} s`);
      }),
    'topics set-message-ttl my-tenant/my-ns/orders --ttl 1h',
  );
}

function registerGetMessageTtl(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('get-message-ttl')
      .description(
        "Show a topic's own message TTL in seconds, or with --applied the one in force (JSON; null when none)",
      )
      .argument('<topic>', TOPIC_ARGUMENT)
      .option(
        '--applied',
        'the TTL in force: the topic’s, else its namespace’s (pulsar-admin’s -ap works too)',
      )
      .action(async (topic: string, options: AppliedOption) => {
        context.printJson(
          (await context
            .admin()
            .topics()
            .getMessageTTL(topic, options.applied ?? false)) ?? null,
        );
      }),
    'topics get-message-ttl my-tenant/my-ns/orders',
  );
}

function registerRemoveMessageTtl(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('remove-message-ttl')
      .description("Remove a topic's own message TTL (its namespace's applies again)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        await context.admin().topics().removeMessageTTL(topic);
        context.print(`Removed the message TTL of ${fullName(topic)}`);
      }),
    'topics remove-message-ttl my-tenant/my-ns/orders',
  );
}
