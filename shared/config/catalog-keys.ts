/**
 * The key of a subscription's item in the Catalog table (pk `ML#<partition>`, sk
 * `S#<subscription>`; attribute `ci` holds its cursor id). Pure data, as resources.ts: the
 * DynamoDB catalog adapter writes the item under it, and the AcklineSubscriptionConsumer
 * construct reads it at deploy time to find the subscription's queues.
 *
 * @example
 * subscriptionItemKey('persistent://public/default/orders', 'billing');
 * // { pk: 'ML#persistent://public/default/orders', sk: 'S#billing' }
 */
export function subscriptionItemKey(partition: string, subscription: string): { pk: string; sk: string } {
  return { pk: `ML#${partition}`, sk: `S#${subscription}` };
}

/** The attribute of the subscription's item that holds its cursor id. */
export const CURSOR_ID_ATTRIBUTE = 'ci';
