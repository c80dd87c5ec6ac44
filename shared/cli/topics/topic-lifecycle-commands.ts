import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { withExamples } from '../help-examples.ts';
import { integerParser } from '../option-parsers.ts';
import { type ForceOption, fullName, TOPIC_ARGUMENT } from './topic-arguments.ts';

/**
 * `ackline-admin topics create|create-partitioned-topic|list|list-partitioned-topics|delete|delete-partitioned-topic`:
 * a topic's lifecycle, with pulsar-admin's names and flags.
 *
 * @example
 * registerTopicLifecycleCommands(topics, context);
 * // $ ackline-admin topics create-partitioned-topic my-tenant/my-ns/orders -p 4
 */
export function registerTopicLifecycleCommands(topics: Command, context: CliContext): void {
  registerCreate(topics, context);
  registerCreatePartitionedTopic(topics, context);
  registerList(topics, context);
  registerListPartitionedTopics(topics, context);
  registerDelete(topics, context);
  registerDeletePartitionedTopic(topics, context);
}

function registerCreate(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('create')
      .description('Create a non-partitioned topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        await context.admin().topics().createNonPartitionedTopic(topic);
        context.print(`Created topic ${fullName(topic)}`);
      }),
    'topics create my-tenant/my-ns/orders',
  );
}

function registerCreatePartitionedTopic(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('create-partitioned-topic')
      .description('Create a partitioned topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-p, --partitions <N>', 'number of partitions (>= 1)', integerParser(1))
      .action(async (topic: string, options: { readonly partitions: number }) => {
        await context.admin().topics().createPartitionedTopic(topic, options.partitions);
        context.print(`Created partitioned topic ${fullName(topic)} with ${options.partitions} partitions`);
      }),
    'topics create-partitioned-topic my-tenant/my-ns/orders -p 4',
  );
}

function registerList(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('list')
      .description('List the topics of a namespace, one full name per line')
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        context.printList(await context.admin().topics().getList(namespace));
      }),
    'topics list my-tenant/my-ns',
  );
}

function registerListPartitionedTopics(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('list-partitioned-topics')
      .description('List the partitioned topics of a namespace by their own names, one per line')
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        context.printList(await context.admin().topics().getPartitionedTopicList(namespace));
      }),
    'topics list-partitioned-topics my-tenant/my-ns',
  );
}

function registerDelete(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('delete')
      .description('Delete a topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .option('-f, --force', 'delete even while consumers are connected (they are disconnected)')
      .action(async (topic: string, options: ForceOption) => {
        await context
          .admin()
          .topics()
          .delete(topic, { force: options.force === true });
        context.print(`Deleted topic ${fullName(topic)}`);
      }),
    'topics delete my-tenant/my-ns/orders',
    'topics delete my-tenant/my-ns/orders -f',
  );
}

function registerDeletePartitionedTopic(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('delete-partitioned-topic')
      .description(
        'Delete a partitioned topic and all of its partitions (a non-partitioned topic is refused)',
      )
      .argument('<topic>', TOPIC_ARGUMENT)
      .option('-f, --force', 'delete even while consumers are connected (they are disconnected)')
      .action(async (topic: string, options: ForceOption) => {
        await context
          .admin()
          .topics()
          .deletePartitionedTopic(topic, { force: options.force === true });
        context.print(`Deleted partitioned topic ${fullName(topic)}`);
      }),
    'topics delete-partitioned-topic my-tenant/my-ns/orders',
  );
}
