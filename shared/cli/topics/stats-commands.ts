import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { withExamples } from '../help-examples.ts';
import { TOPIC_ARGUMENT } from './topic-arguments.ts';

/**
 * `ackline-admin topics stats|stats-internal|partitioned-stats`: a topic's stats (JSON), with
 * pulsar-admin's names and flags.
 *
 * @example
 * registerStatsCommands(topics, context);
 * // $ ackline-admin topics partitioned-stats my-tenant/my-ns/orders --per-partition
 */
export function registerStatsCommands(topics: Command, context: CliContext): void {
  registerStats(topics, context);
  registerStatsInternal(topics, context);
  registerPartitionedStats(topics, context);
}

function registerStats(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('stats')
      .description("Show a topic's stats (JSON, Pulsar's TopicStats)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        context.printJson(await context.admin().topics().getStats(topic));
      }),
    'topics stats my-tenant/my-ns/orders',
  );
}

function registerStatsInternal(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('stats-internal')
      .description("Show a topic's internal stats: ledgers and cursors (JSON)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        context.printJson(await context.admin().topics().getInternalStats(topic));
      }),
    'topics stats-internal my-tenant/my-ns/orders',
  );
}

function registerPartitionedStats(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('partitioned-stats')
      .description("Show a partitioned topic's stats, summed over its partitions (JSON)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .option('--per-partition', "also show each partition's stats")
      .action(async (topic: string, options: { readonly perPartition?: boolean }) => {
        context.printJson(
          await context
            .admin()
            .topics()
            .getPartitionedStats(topic, options.perPartition === true),
        );
      }),
    'topics partitioned-stats my-tenant/my-ns/orders --per-partition',
  );
}
