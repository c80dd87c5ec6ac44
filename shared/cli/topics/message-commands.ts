import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { withExamples } from '../help-examples.ts';
import { integerParser, parseEntryId, parseList } from '../option-parsers.ts';
import { type DryRunOption, fullName, type SubscriptionOption, TOPIC_ARGUMENT } from './topic-arguments.ts';

interface PositionOptions {
  readonly ledgerId: string;
  readonly entryId: string;
}

interface AcknowledgeMessageOptions extends PositionOptions, DryRunOption {
  readonly subscriptionNames?: readonly string[];
}

/**
 * `ackline-admin topics peek-messages|get-message-by-id|acknowledgeMessage|acknowledgeMessage-audit`:
 * reading and acknowledging single messages, with pulsar-admin's names and flags.
 *
 * @example
 * registerMessageCommands(topics, context);
 * // $ ackline-admin topics acknowledgeMessage my-tenant/my-ns/orders -l 12 -e 3 -s billing
 */
export function registerMessageCommands(topics: Command, context: CliContext): void {
  registerAcknowledgeMessage(topics, context);
  registerAcknowledgeMessageAudit(topics, context);
  registerPeekMessages(topics, context);
  registerGetMessageById(topics, context);
}

function registerAcknowledgeMessage(topics: Command, context: CliContext): void {
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
      .action(async (topic: string, options: AcknowledgeMessageOptions) => {
        const report = await context
          .admin()
          .topics()
          .acknowledgeMessage(topic, {
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
      }),
    'topics acknowledgeMessage persistent://my-tenant/my-ns/orders -l 12 -e 3 -s billing,audit',
    'topics acknowledgeMessage my-tenant/my-ns/orders --ledgerId 12 --entryId 3 --dry-run',
  );
}

function registerAcknowledgeMessageAudit(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('acknowledgeMessage-audit')
      .description('Show the audit trail of admin acknowledgements on a topic (JSON)')
      .argument('<topic>', TOPIC_ARGUMENT)
      .action(async (topic: string) => {
        context.printJson(await context.admin().topics().getAcknowledgeMessageAudit(topic));
      }),
    'topics acknowledgeMessage-audit my-tenant/my-ns/orders',
  );
}

function registerPeekMessages(topics: Command, context: CliContext): void {
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
        context.printJsonEach(
          await context.admin().topics().peekMessages(topic, options.subscription, options.count),
        );
      }),
    'topics peek-messages my-tenant/my-ns/orders -s billing -n 5',
  );
}

function registerGetMessageById(topics: Command, context: CliContext): void {
  withExamples(
    topics
      .command('get-message-by-id')
      .description('Show the message at ledgerId:entryId (JSON)')
      .argument('<topic>', TOPIC_ARGUMENT)
      .requiredOption('-l, --ledgerId <ledgerId>', 'ledger id of the message (digits)', parseEntryId)
      .requiredOption('-e, --entryId <entryId>', 'entry id of the message (digits)', parseEntryId)
      .action(async (topic: string, options: PositionOptions) => {
        context.printJson(
          await context.admin().topics().getMessageById(topic, options.ledgerId, options.entryId),
        );
      }),
    'topics get-message-by-id my-tenant/my-ns/orders -l 12 -e 3',
  );
}
