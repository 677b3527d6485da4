import type { StrategyQuery, StrategyView } from "../../domain/lessons/strategy-view.js";

export type { StrategyQuery, StrategyView };

/**
 * Strategies are memories of their own (docs/specification.md#strategy-importance): each stored
 * lesson's strategy is kept beside it, tagged `strategy`, with the lesson's importance raised by
 * 10 %. What the strategies feature reads; implemented by `src/adapters/postgres/pg-strategy-store.ts`.
 */

export interface StrategyStore {
  /** Ordered by text rank (with words), then importance and recency. */
  searchStrategies(
    tenantId: string,
    query: StrategyQuery,
  ): Promise<{ items: StrategyView[]; hasMore: boolean }>;
  /** One strategy of the tenant; null when it has none with this id. */
  strategyById(tenantId: string, id: string): Promise<StrategyView | null>;
}
