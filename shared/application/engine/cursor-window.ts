import { Position } from '../../domain/position.ts';
import { DISPATCH_PAGE_SIZE, type PageRef } from '../../ports/dispatch-store.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';

/** A page of the window, with how many of its entries the ledger holds (allocated so far). */
export interface WindowPage extends PageRef {
  /** First entry id of the page. */
  readonly firstEntryId: bigint;
  /** One past the last entry id of the page the ledger holds (allocated) now. */
  readonly endEntryId: bigint;
  /** The page's ledger is closed (rolled over): no entry will be added to it. */
  readonly ledgerClosed: boolean;
}

/**
 * The pages from the one holding `from` on, across ledgers, in log order, at most `maxPages`: what
 * the fold, the release jobs and the rewinds walk. Reads the partition's ledger layout once.
 */
export async function windowPages(
  ctx: EngineContext,
  cursor: PartitionCursor,
  from: Position,
  maxPages: number,
): Promise<WindowPage[]> {
  // Stryker disable next-line ArrayDeclaration: equivalent, an element that is no LedgerInfo has no ledgerId nor entries to make a page of
  const ledgers = (await ctx.ledger.state(cursor.partition))?.ledgers ?? [];
  const pages: WindowPage[] = [];
  for (const [index, ledger] of ledgers.entries()) {
    if (ledger.ledgerId < from.ledgerId) continue;
    const closed = index < ledgers.length - 1;
    // Position.beforeFirst's entry id -1 falls in page 0 too: BigInt division truncates toward zero.
    const startId = ledger.ledgerId === from.ledgerId ? from.entryId : 0n;
    for (let page = startId / DISPATCH_PAGE_SIZE; page * DISPATCH_PAGE_SIZE < ledger.entries; page++) {
      if (pages.length >= maxPages) return pages;
      const firstEntryId = page * DISPATCH_PAGE_SIZE;
      const fullEnd = firstEntryId + DISPATCH_PAGE_SIZE;
      pages.push({
        ledgerId: ledger.ledgerId,
        page,
        firstEntryId,
        endEntryId: fullEnd < ledger.entries ? fullEnd : ledger.entries,
        ledgerClosed: closed,
      });
    }
  }
  return pages;
}

/** The first position of a page. */
export function pageStart(page: PageRef): Position {
  return Position.of(page.ledgerId, page.page * DISPATCH_PAGE_SIZE);
}
