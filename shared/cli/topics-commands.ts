import { type Command, Option } from 'commander';
import { parseTopic } from '../client/admin-paths.ts';
import type { InitialPosition, SubscriptionType } from '../client/admin-types.ts';
import { type CliContext, CliError } from './cli-context.ts';
import { withExamples } from './help-examples.ts';
import { integerParser, parseEntryId, parseList } from './option-parsers.ts';
import { parseRelativeTimeSeconds } from './relative-time.ts';

export const TOPIC_ARGUMENT = 'persistent://tenant/namespace/topic, or tenant/namespace/topic';
const SUBSCRIPTION_TYPES: readonly SubscriptionType[] = ['Exclusive', 'Shared', 'Failover', 'Key_Shared'];
const INITIAL_POSITIONS: Readonly<Record<string, InitialPosition>> = {
  earliest: 'Earliest',
  latest: 'Latest',
};

interface SubscriptionOption {
  readonly subscription: string;
}
interface ForceOption {
  readonly force?: boolean;
}
interface DryRunOption {
  readonly dryRun?: boolean;
}
interface PositionOptions {
  readonly ledgerId: string;
  readonly entryId: string;
}
interface PermissionOptions {
  readonly role: string;
  readonly actions: readonly string[];
}

/**
 * `ackline-admin topics ...`: the pulsar-admin `topics` commands ackline serves, same names and flags.
 *
 * @example
 * registerTopicsCommands(program, context);
 * // $ ackline-admin topics acknowledgeMessage my-tenant/my-ns/orders -l 12 -e 3 -s billing
 * @returns the `topics` command, for more commands under it (see registerTopicPoliciesCommands).
 */
export function registerTopicsCommands(program: Command, context: CliContext): Command {
  const topics = program.command('topics').description('Operations on topics and their subscriptions');
  const topicsApi = () => context.admin().topics();

  withExamples(
    topics
      .command('acknowledgeMessage')
      .description(
        'Acknowledge one message (ledgerId:entryId) on the given subscriptions, or on all subscriptions of the topic (PIP-423)',
      )
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption(
        '-l, --ledgerId <ledgerId>',
        'ledger id of the message (digits; may exceed 2^53)',
        parseEntryId,
      )
      .requiredOption('-e, --entryId <entryId>', 'entry id of the message (digits)', parseEntryId)
      .option(
        '-s, --subscriptionNames <names>',
        'comma-separated subscriptions to acknowledge on (repeatable); default: all subscriptions',
        parseList,
      )
      .option('--dry-run', 'report what would be acknowledged, changing nothing')
      .action(
        async (
          topic: string,
          options: PositionOptions & {
            readonly subscriptionNames?: readonly string[];
            readonly dryRun?: boolean;
          },
        ) => {
          const report = await topicsApi().acknowledgeMessage(topic, {
            ledgerId: options.ledgerId,
            entryId: options.entryId,
            subscriptionNames: options.subscriptionNames,
            dryRun: options.dryRun === true,
          });
          if (options.dryRun) {
            context.printJson(report);
            return;
          }
          const on = options.subscriptionNames?.length
            ? `subscription${options.subscriptionNames.length > 1 ? 's' : ''} ${options.subscriptionNames.join(', ')}`
            : 'all subscriptions';
          context.print(
            `Acknowledged message ${options.ledgerId}:${options.entryId} on ${on} of ${fullName(topic)}`,
          );
        },
      ),
    'topics acknowledgeMessage persistent://my-tenant/my-ns/orders -l 12 -e 3 -s billing,audit',
    'topics acknowledgeMessage my-tenant/my-ns/orders --ledgerId 12 --entryId 3 --dry-run',
  );

  withExamples(
    topics
      .command('acknowledgeMessage-audit')
      .description('Show the audit trail of admin acknowledgements on a topic (JSON)')
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        context.printJson(await topicsApi().getAcknowledgeMessageAudit(topic));
      }),
    'topics acknowledgeMessage-audit my-tenant/my-ns/orders',
  );

  withExamples(
    topics
      .command('create')
      .description('Create a non-partitioned topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        await topicsApi().createNonPartitionedTopic(topic);
        context.print(`Created topic ${fullName(topic)}`);
      }),
    'topics create my-tenant/my-ns/orders',
  );

  withExamples(
    topics
      .command('create-partitioned-topic')
      .description('Create a partitioned topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-p, --partitions <N>', 'number of partitions (>= 1)', integerParser(1))
      .action(async (topic: string, options: { readonly partitions: number }) => {
        await topicsApi().createPartitionedTopic(topic, options.partitions);
        context.print(`Created partitioned topic ${fullName(topic)} with ${options.partitions} partitions`);
      }),
    'topics create-partitioned-topic my-tenant/my-ns/orders -p 4',
  );

  withExamples(
    topics
      .command('list')
      .description('List the topics of a namespace, one full name per line')
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        context.printList(await topicsApi().getList(namespace));
      }),
    'topics list my-tenant/my-ns',
  );

  withExamples(
    topics
      .command('list-partitioned-topics')
      .description('List the partitioned topics of a namespace by their own names, one per line')
      .argument('<namespace>', 'tenant/namespace')
      .action(async (namespace: string) => {
        context.printList(await topicsApi().getPartitionedTopicList(namespace));
      }),
    'topics list-partitioned-topics my-tenant/my-ns',
  );

  withExamples(
    topics
      .command('delete')
      .description('Delete a topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .option('-f, --force', 'delete even while consumers are connected (they are disconnected)')
      .action(async (topic: string, options: ForceOption) => {
        await topicsApi().delete(topic, { force: options.force === true });
        context.print(`Deleted topic ${fullName(topic)}`);
      }),
    'topics delete my-tenant/my-ns/orders',
    'topics delete my-tenant/my-ns/orders -f',
  );

  withExamples(
    topics
      .command('delete-partitioned-topic')
      .description(
        'Delete a partitioned topic and all of its partitions (a non-partitioned topic is refused)',
      )
      .argument('<topic>', TOPIC_ARGUMENT)
      .option('-f, --force', 'delete even while consumers are connected (they are disconnected)')
      .action(async (topic: string, options: ForceOption) => {
        await topicsApi().deletePartitionedTopic(topic, { force: options.force === true });
        context.print(`Deleted partitioned topic ${fullName(topic)}`);
      }),
    'topics delete-partitioned-topic my-tenant/my-ns/orders',
  );

  withExamples(
    topics
      .command('create-subscription')
      .description('Create a durable subscription on a topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription name')
      .addOption(
        new Option('--subscription-type <type>', 'subscription type (default: the server default)').choices(
          SUBSCRIPTION_TYPES,
        ),
      )
      .addOption(
        new Option('-m, --messageId <position>', 'where the cursor starts (default: latest)').choices(
          Object.keys(INITIAL_POSITIONS),
        ),
      )
      .action(
        async (
          topic: string,
          options: SubscriptionOption & {
            readonly subscriptionType?: SubscriptionType;
            readonly messageId?: string;
          },
        ) => {
          const initialPosition = options.messageId ? INITIAL_POSITIONS[options.messageId] : undefined;
          await topicsApi().createSubscription(topic, options.subscription, {
            subscriptionType: options.subscriptionType,
            initialPosition,
          });
          context.print(`Created subscription ${options.subscription} on ${fullName(topic)}`);
        },
      ),
    'topics create-subscription my-tenant/my-ns/orders -s billing --subscription-type Shared -m earliest',
  );

  withExamples(
    topics
      .command('subscriptions')
      .description("List a topic's subscriptions, one per line")
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        context.printList(await topicsApi().getSubscriptions(topic));
      }),
    'topics subscriptions my-tenant/my-ns/orders',
  );

  withExamples(
    topics
      .command('unsubscribe')
      .description('Delete a subscription from a topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to delete')
      .option('-f, --force', 'delete even while consumers are connected (they are disconnected)')
      .action(async (topic: string, options: SubscriptionOption & ForceOption) => {
        await topicsApi().deleteSubscription(topic, options.subscription, { force: options.force === true });
        context.print(`Deleted subscription ${options.subscription} of ${fullName(topic)}`);
      }),
    'topics unsubscribe my-tenant/my-ns/orders -s billing',
    'topics unsubscribe my-tenant/my-ns/orders -s billing -f',
  );

  withExamples(
    topics
      .command('stats')
      .description("Show a topic's stats (JSON, Pulsar's TopicStats)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        context.printJson(await topicsApi().getStats(topic));
      }),
    'topics stats my-tenant/my-ns/orders',
  );

  withExamples(
    topics
      .command('stats-internal')
      .description("Show a topic's internal stats: ledgers and cursors (JSON)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        context.printJson(await topicsApi().getInternalStats(topic));
      }),
    'topics stats-internal my-tenant/my-ns/orders',
  );

  withExamples(
    topics
      .command('peek-messages')
      .description(
        "Show the first messages of a subscription's backlog without consuming them (JSON, one per message)",
      )
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription whose backlog to peek')
      .option('-n, --count <N>', 'number of messages (default 1)', integerParser(1), 1)
      .action(async (topic: string, options: SubscriptionOption & { readonly count: number }) => {
        context.printJsonEach(await topicsApi().peekMessages(topic, options.subscription, options.count));
      }),
    'topics peek-messages my-tenant/my-ns/orders -s billing -n 5',
  );

  withExamples(
    topics
      .command('get-message-by-id')
      .description('Show the message at ledgerId:entryId (JSON)')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-l, --ledgerId <ledgerId>', 'ledger id of the message (digits)', parseEntryId)
      .requiredOption('-e, --entryId <entryId>', 'entry id of the message (digits)', parseEntryId)
      .action(async (topic: string, options: PositionOptions) => {
        context.printJson(await topicsApi().getMessageById(topic, options.ledgerId, options.entryId));
      }),
    'topics get-message-by-id my-tenant/my-ns/orders -l 12 -e 3',
  );

  withExamples(
    topics
      .command('skip')
      .description("Skip (acknowledge) the next N messages of a subscription's backlog")
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to skip on')
      .requiredOption('-n, --count <N>', 'number of messages to skip', integerParser(0))
      .action(async (topic: string, options: SubscriptionOption & { readonly count: number }) => {
        await topicsApi().skipMessages(topic, options.subscription, options.count);
        context.print(
          `Skipped ${options.count} messages on subscription ${options.subscription} of ${fullName(topic)}`,
        );
      }),
    'topics skip my-tenant/my-ns/orders -s billing -n 10',
  );

  withExamples(
    topics
      .command('partitioned-stats')
      .description("Show a partitioned topic's stats, summed over its partitions (JSON)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .option('--per-partition', "also show each partition's stats")
      .action(async (topic: string, options: { readonly perPartition?: boolean }) => {
        context.printJson(await topicsApi().getPartitionedStats(topic, options.perPartition === true));
      }),
    'topics partitioned-stats my-tenant/my-ns/orders --per-partition',
  );

  withExamples(
    topics
      .command('reset-cursor')
      .description("Reset a subscription's cursor to a time before now (-t) or to a message id (-m)")
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to reset')
      .option(
        '-t, --time <time>',
        'how long ago, e.g. 100m, 3h, 2d: the cursor moves to the first message since',
      )
      .option('-m, --messageId <messageId>', 'ledgerId:entryId to reset to, or earliest (-1:-1) / latest')
      .option('-e, --exclude-reset-position', 'start after the message id rather than at it')
      .option('--dry-run', 'report where each cursor would go, changing nothing')
      .action(
        async (
          topic: string,
          options: SubscriptionOption &
            DryRunOption & {
              readonly time?: string;
              readonly messageId?: string;
              readonly excludeResetPosition?: boolean;
            },
        ) => {
          if ((options.time === undefined) === (options.messageId === undefined)) {
            throw new CliError('Give either -t/--time or -m/--messageId');
          }
          const dryRun = { dryRun: options.dryRun === true };
          if (options.time !== undefined) {
            const timestampMs =
              context.nowMs() - parseRelativeTimeSeconds(options.time, { allowZero: true }) * 1000;
            const report = await topicsApi().resetCursor(topic, options.subscription, timestampMs, dryRun);
            if (options.dryRun) return context.printJson(report);
            context.print(
              `Reset the cursor of ${options.subscription} on ${fullName(topic)} to ${new Date(timestampMs).toISOString()}`,
            );
            return;
          }
          // pulsar-admin parses -1:-1 (MessageId.earliest, printed -1:-1:-1) like any id.
          const given = options.messageId?.toLowerCase();
          const edge = given === '-1:-1' || given === '-1:-1:-1' ? 'earliest' : given;
          if (edge === 'earliest' || edge === 'latest') {
            const report = await topicsApi().resetCursor(topic, options.subscription, edge, dryRun);
            if (options.dryRun) return context.printJson(report);
            context.print(`Reset the cursor of ${options.subscription} on ${fullName(topic)} to ${edge}`);
            return;
          }
          const match = /^(\d+):(\d+)(?::(-?\d+))?$/.exec(options.messageId as string);
          if (!match)
            throw new CliError(`Invalid message id '${options.messageId}': expected ledgerId:entryId`);
          // The partition index, if given, is not needed: a ledger id names one partition.
          const report = await topicsApi().resetCursor(
            topic,
            options.subscription,
            {
              ledgerId: match[1] as string,
              entryId: match[2] as string,
              ...(options.excludeResetPosition === true ? { isExcluded: true } : {}),
            },
            dryRun,
          );
          if (options.dryRun) return context.printJson(report);
          context.print(
            `Reset the cursor of ${options.subscription} on ${fullName(topic)} to ${options.excludeResetPosition === true ? 'after ' : ''}${options.messageId}`,
          );
        },
      ),
    'topics reset-cursor my-tenant/my-ns/orders -s billing -t 1h',
    'topics reset-cursor my-tenant/my-ns/orders -s billing -m 12:3',
    'topics reset-cursor my-tenant/my-ns/orders -s billing -m earliest',
    'topics reset-cursor my-tenant/my-ns/orders -s billing -t 1h --dry-run',
  );

  withExamples(
    topics
      .command('clear-backlog')
      .description("Acknowledge a subscription's whole backlog")
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to clear')
      .option('--dry-run', 'report where each cursor would go, changing nothing')
      .action(async (topic: string, options: SubscriptionOption & DryRunOption) => {
        const report = await topicsApi().skipAllMessages(topic, options.subscription, {
          dryRun: options.dryRun === true,
        });
        if (options.dryRun) return context.printJson(report);
        context.print(`Cleared the backlog of ${options.subscription} on ${fullName(topic)}`);
      }),
    'topics clear-backlog my-tenant/my-ns/orders -s billing',
  );

  withExamples(
    topics
      .command('expire-messages')
      .description('Acknowledge the messages of a subscription older than the given time')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to expire messages on')
      .requiredOption('-t, --expireTime <time>', 'age, e.g. 3600 (seconds), 100m, 3h')
      .option('--dry-run', 'report where each cursor would go, changing nothing')
      .action(
        async (
          topic: string,
          options: SubscriptionOption & DryRunOption & { readonly expireTime: string },
        ) => {
          const seconds = parseRelativeTimeSeconds(options.expireTime, { allowZero: true });
          const report = await topicsApi().expireMessages(topic, options.subscription, seconds, {
            dryRun: options.dryRun === true,
          });
          if (options.dryRun) return context.printJson(report);
          context.print(
            `Expired the messages older than ${seconds} s on ${options.subscription} of ${fullName(topic)}`,
          );
        },
      ),
    'topics expire-messages my-tenant/my-ns/orders -s billing -t 1h',
  );

  withExamples(
    topics
      .command('expire-messages-all-subscriptions')
      .description('Acknowledge the messages older than the given time on every subscription of a topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-t, --expireTime <time>', 'age, e.g. 3600 (seconds), 100m, 3h')
      .option('--dry-run', 'report where each cursor would go, changing nothing')
      .action(async (topic: string, options: DryRunOption & { readonly expireTime: string }) => {
        const seconds = parseRelativeTimeSeconds(options.expireTime, { allowZero: true });
        const report = await topicsApi().expireMessagesForAllSubscriptions(topic, seconds, {
          dryRun: options.dryRun === true,
        });
        if (options.dryRun) return context.printJson(report);
        context.print(
          `Expired the messages older than ${seconds} s on every subscription of ${fullName(topic)}`,
        );
      }),
    'topics expire-messages-all-subscriptions my-tenant/my-ns/orders -t 1h',
  );

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
        await topicsApi().grantPermission(topic, options.role, options.actions);
        context.print(`Granted ${options.actions.join(', ')} on ${fullName(topic)} to role ${options.role}`);
      }),
    'topics grant-permission my-tenant/my-ns/orders --role ops --actions consume,acknowledge_message',
  );

  withExamples(
    topics
      .command('revoke-permission')
      .description('Revoke every action granted to a role on a topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('--role <role>', 'role (a token subject)')
      .action(async (topic: string, options: { readonly role: string }) => {
        await topicsApi().revokePermissions(topic, options.role);
        context.print(`Revoked the permissions of role ${options.role} on ${fullName(topic)}`);
      }),
    'topics revoke-permission my-tenant/my-ns/orders --role ops',
  );

  withExamples(
    topics
      .command('permissions')
      .description('Show the permissions on a topic (JSON: role -> actions)')
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        context.printJson(await topicsApi().getPermissions(topic));
      }),
    'topics permissions my-tenant/my-ns/orders',
  );
  return topics;
}

/** `persistent://tenant/namespace/topic` for any form pulsar-admin accepts. */
export function fullName(topic: string): string {
  const { domain, tenant, namespace, localName } = parseTopic(topic);
  return `${domain}://${tenant}/${namespace}/${localName}`;
}
