import type { Command } from 'commander';

/** Appends usage examples to a command's `--help`. */
export function withExamples(command: Command, ...examples: readonly string[]): Command {
  const lines = examples.map((example) => `  $ ackline-admin ${example}`).join('\n');
  return command.addHelpText('after', `\nExample${examples.length > 1 ? 's' : ''}:\n${lines}`);
}
