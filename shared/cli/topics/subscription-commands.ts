import { type Command, Option } from 'commander';
import type { InitialPosition, SubscriptionType } from '../../client/admin-types.ts';
import type { CliContext } from '../cli-context.ts';
import { withExamples } from '../help-examples.ts';
import { type ForceOption, fullName, type SubscriptionOption, TOPIC_ARGUMENT } from './topic-arguments.ts';

const SUBSCRIPTION_TYPES: readonly SubscriptionType[] = ['Exclusive', 'Shared', 'Failover', 'Key_Shared'];
const INITIAL_POSITIONS: Readonly<Record<string, InitialPosition>> = {
  earliest: 'Earliest',
  latest: 'Latest',
};

/**
 * `ackline-admin topics create-subscription|subscriptions|unsubscribe`: a topic's subscriptions,
 * with pulsar-admin's names and flags.
 *
 * @example
 * registerSubscriptionCommands(topics, context);
 * // $ ackline-admin topics create-subscription my-tenant/my-ns/orders -s billing -m earliest
 */
export function registerSubscriptionCommands(topics: Command, context: CliContext): void {
  registerCreateSubscription(topics, context);
  registerSubscriptions(topics, context);
  registerUnsubscribe(topics, context);
}

function registerCreateSubscription(topics: Command, context: CliContext): void {
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
          await context.admin().topics().createSubscription(topic, options.subscription, {
            subscriptionType: options.subscriptionType,
            initialPosition,
          });
          context.print(`Created subscription ${options.subscription} on ${fullName(topic)}`);
        },
      ),
    'topics create-subscription my-tenant/my-ns/orders -s billing --subscription-type Shared -m earliest',
  );
}

function registerSubscriptions(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('subscriptions')
      .description("List a topic's subscriptions, one per line")
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        context.printList(await context.admin().topics().getSubscriptions(topic));
      }),
    'topics subscriptions my-tenant/my-ns/orders',
  );
}

function registerUnsubscribe(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('unsubscribe')
      .description('Delete a subscription from a topic')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-s, --subscription <subscription>', 'subscription to delete')
      .option('-f, --force', 'delete even while consumers are connected (they are disconnected)')
      .action(async (topic: string, options: SubscriptionOption & ForceOption) => {
        await context
          .admin()
          .topics()
          .deleteSubscription(topic, options.subscription, { force: options.force === true });
        context.print(`Deleted subscription ${options.subscription} of ${fullName(topic)}`);
      }),
    'topics unsubscribe my-tenant/my-ns/orders -s billing',
    'topics unsubscribe my-tenant/my-ns/orders -s billing -f',
  );
}
