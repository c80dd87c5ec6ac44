import type { Command } from 'commander';
import type { CliContext } from './cli-context.ts';
import { CliError } from './cli-context.ts';
import { withExamples } from './help-examples.ts';
import { fullName, TOPIC_ARGUMENT } from './topics/topic-arguments.ts';

type Scope = 'namespaces' | 'topics';
type Limit = 'maxSubscriptionsPerTopic' | 'maxConsumersPerSubscription';

/** pulsar-admin's command stem, flag and short flag of each limit. */
const LIMITS: readonly {
  readonly name: Limit;
  readonly stem: string;
  readonly flag: string;
  readonly short: string;
  readonly what: string;
}[] = [
  {
    name: 'maxSubscriptionsPerTopic',
    stem: 'max-subscriptions-per-topic',
    flag: 'max-subscriptions-per-topic',
    short: 'm',
    what: 'how many subscriptions a topic may have',
  },
  {
    name: 'maxConsumersPerSubscription',
    stem: 'max-consumers-per-subscription',
    flag: 'max-consumers-per-subscription',
    short: 'c',
    what: 'how many consumers a subscription may have connected',
  },
];

/**
 * `ackline-admin namespaces|topics set-|get-|remove-max-subscriptions-per-topic` and
 * `...-max-consumers-per-subscription`, pulsar-admin's names and flags (`-m`, `-c`); a topic's
 * limit is over its namespace's, and without either ackline's default applies (1,000).
 *
 * @example
 * registerSubscriptionLimitCommands(namespaces, context, 'namespaces');
 * // $ ackline-admin namespaces set-max-subscriptions-per-topic my-tenant/my-ns -m 50
 */
export function registerSubscriptionLimitCommands(parent: Command, context: CliContext, scope: Scope): void {
  for (const limit of LIMITS) {
    registerSet(parent, context, scope, limit);
    registerGet(parent, context, scope, limit);
    registerRemove(parent, context, scope, limit);
  }
}

const ARGUMENT: Record<Scope, readonly [string, string]> = {
  namespaces: ['<namespace>', 'tenant/namespace'],
  topics: ['<topic>', TOPIC_ARGUMENT],
};

const EXAMPLE_TARGET: Record<Scope, string> = {
  namespaces: 'my-tenant/my-ns',
  topics: 'my-tenant/my-ns/orders',
};

function named(scope: Scope, target: string): string {
  return scope === 'topics' ? fullName(target) : target;
}

function registerSet(
  parent: Command,
  context: CliContext,
  scope: Scope,
  limit: (typeof LIMITS)[number],
): void {
  withExamples(
    parent
      .command(`set-${limit.stem}`)
      .description(`Set ${limit.name} of a ${scope.slice(0, -1)}: ${limit.what} (0: no limit)`)
      .argument(...ARGUMENT[scope])
      .requiredOption(`-${limit.short}, --${limit.flag} <count>`, `${limit.name}, an integer >= 0`)
      .action(async (target: string, options: Record<string, string>) => {
        const text = String(options[limit.name]).trim();
        if (!/^\d{1,10}$/.test(text)) {
          throw new CliError(`Invalid ${limit.name} '${text}': expected an integer >= 0`);
        }
        const value = Number(text);
        const admin = context.admin();
        if (limit.name === 'maxSubscriptionsPerTopic') {
          await admin[scope]().setMaxSubscriptionsPerTopic(target, value);
        } else {
          await admin[scope]().setMaxConsumersPerSubscription(target, value);
        }
        context.print(`Set ${limit.name} of ${named(scope, target)} to ${value}`);
      }),
    `${scope} set-${limit.stem} ${EXAMPLE_TARGET[scope]} -${limit.short} 50`,
  );
}

function registerGet(
  parent: Command,
  context: CliContext,
  scope: Scope,
  limit: (typeof LIMITS)[number],
): void {
  const command = parent
    .command(`get-${limit.stem}`)
    .description(
      scope === 'topics'
        ? `Show a topic's own ${limit.name}, or with --applied the one in force (JSON; null when none)`
        : `Show a namespace's ${limit.name} (JSON; null when none is set: the default, 1000, applies)`,
    )
    .argument(...ARGUMENT[scope]);
  if (scope === 'topics') {
    command.option(
      '--applied',
      'the limit in force: the topic’s, else its namespace’s, else 1000 (-ap works too)',
    );
  }
  command.action(async (target: string, options: { readonly applied?: boolean }) => {
    const applied = options.applied ?? false;
    const admin = context.admin();
    const value =
      limit.name === 'maxSubscriptionsPerTopic'
        ? scope === 'topics'
          ? await admin.topics().getMaxSubscriptionsPerTopic(target, applied)
          : await admin.namespaces().getMaxSubscriptionsPerTopic(target)
        : scope === 'topics'
          ? await admin.topics().getMaxConsumersPerSubscription(target, applied)
          : await admin.namespaces().getMaxConsumersPerSubscription(target);
    context.printJson(value ?? null);
  });
  withExamples(command, `${scope} get-${limit.stem} ${EXAMPLE_TARGET[scope]}`);
}

function registerRemove(
  parent: Command,
  context: CliContext,
  scope: Scope,
  limit: (typeof LIMITS)[number],
): void {
  withExamples(
    parent
      .command(`remove-${limit.stem}`)
      .description(
        `Remove ${limit.name} of a ${scope.slice(0, -1)} (${scope === 'topics' ? "its namespace's" : 'the default, 1000,'} applies again)`,
      )
      .argument(...ARGUMENT[scope])
      .action(async (target: string) => {
        const admin = context.admin();
        if (limit.name === 'maxSubscriptionsPerTopic')
          await admin[scope]().removeMaxSubscriptionsPerTopic(target);
        else await admin[scope]().removeMaxConsumersPerSubscription(target);
        context.print(`Removed ${limit.name} of ${named(scope, target)}`);
      }),
    `${scope} remove-${limit.stem} ${EXAMPLE_TARGET[scope]}`,
  );
}
