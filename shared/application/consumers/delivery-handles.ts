import { DeliveryHandleSigner } from '../../domain/delivery-handle.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/**
 * This deployment's delivery handles: issued by receive, verified by ack, nack and
 * redeliver-unacknowledged. Cost: the handle key store's (one read per process, cached by the
 * composition root).
 */
export async function deliveryHandlesOf(ports: UseCasePorts): Promise<DeliveryHandleSigner> {
  return new DeliveryHandleSigner(await ports.handleKeys.loadOrCreate());
}
