import type { Command } from 'commander';
import type { CliContext } from './cli-context.ts';
import { withExamples } from './help-examples.ts';
import { parseList } from './option-parsers.ts';

/**
 * `ackline-admin tenants ...`: pulsar-admin's `tenants` commands, same names and flags.
 *
 * @example
 * registerTenantsCommands(program, context);
 * // $ ackline-admin tenants create my-tenant --admin-roles ops
 */
export function registerTenantsCommands(program: Command, context: CliContext): void {
  const tenants = program.command('tenants').description('Operations on tenants');
  const tenantsApi = () => context.admin().tenants();

  withExamples(
    tenants
      .command('create')
      .description('Create a tenant')
      .argument('<tenant>', 'tenant name')
      .option('-r, --admin-roles <roles>', 'comma-separated roles that administer the tenant', parseList)
      .option(
        '-c, --allowed-clusters <clusters>',
        'comma-separated clusters (default: all clusters)',
        parseList,
      )
      .action(
        async (
          tenant: string,
          options: { readonly adminRoles?: readonly string[]; readonly allowedClusters?: readonly string[] },
        ) => {
          // As pulsar-admin: without -c, every cluster of the deployment (ackline has one).
          const allowedClusters = options.allowedClusters ?? (await tenantsApi().getClusters());
          await tenantsApi().createTenant(tenant, { adminRoles: options.adminRoles ?? [], allowedClusters });
          context.print(`Created tenant ${tenant}`);
        },
      ),
    'tenants create my-tenant --admin-roles ops,alice',
  );

  withExamples(
    tenants
      .command('list')
      .description('List the tenants, one per line')
      .action(async () => {
        context.printList(await tenantsApi().getTenants());
      }),
    'tenants list',
  );

  withExamples(
    tenants
      .command('get')
      .description("Show a tenant's admin roles and allowed clusters (JSON)")
      .argument('<tenant>', 'tenant name')
      .action(async (tenant: string) => {
        context.printJson(await tenantsApi().getTenantInfo(tenant));
      }),
    'tenants get my-tenant',
  );

  withExamples(
    tenants
      .command('delete')
      .description('Delete a tenant that has no namespaces')
      .argument('<tenant>', 'tenant name')
      .option('-f, --force', 'delete its namespaces and topics too (the server refuses: 405)')
      .action(async (tenant: string, options: { readonly force?: boolean }) => {
        await tenantsApi().deleteTenant(tenant, options.force === true);
        context.print(`Deleted tenant ${tenant}`);
      }),
    'tenants delete my-tenant',
  );
}
