/**
 * The deployment's delivery handle key: the HMAC key that signs the handles the data API hands to
 * HTTP consumers (shared/domain/delivery-handle.ts). One per deployment, shared by every function
 * instance, so a handle issued by one instance verifies in any other and after a restart.
 * Durable: kept with the data (a lost key only refuses the handles outstanding then: their
 * consumers ack by message id, or get the messages again after their ack timeout, lease or close).
 */
export interface HandleKeyStore {
  /**
   * The key (DELIVERY_HANDLE_KEY_BYTES random bytes), made by the first call a deployment ever
   * makes; concurrent first calls agree on one key. Cost: one strongly consistent read; the
   * first call of a deployment also one conditional write and (when it lost the race) one more
   * read.
   */
  loadOrCreate(): Promise<Uint8Array>;
}
