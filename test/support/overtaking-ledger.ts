import type { Ledger } from '../../shared/ports/ledger.ts';

/**
 * `ledger`, but its first `readEntries` runs `overtake` after reading and before answering: another
 * consumer's whole receive lands between a dispatch's entries read and its claim, so the claim's
 * compare-and-set meets the head that receive wrote. Later reads pass straight through.
 */
export function overtakingLedger<L extends Ledger>(ledger: L, overtake: () => Promise<unknown>): L {
  let pending = true;
  return new Proxy(ledger, {
    get(target, property, receiver) {
      if (property !== 'readEntries') return Reflect.get(target, property, receiver);
      return async (...args: Parameters<Ledger['readEntries']>) => {
        const read = await target.readEntries(...args);
        if (pending) {
          pending = false;
          await overtake();
        }
        return read;
      };
    },
  });
}
