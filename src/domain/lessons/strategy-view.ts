/** A strategy, stored as a memory of its own beside its lesson, as the read side shows it. */

export interface StrategyQuery {
  /** Words that must all appear in the strategy (full text); absent: every strategy. */
  text?: string | undefined;
  projectId?: string | undefined;
  /** Tags the strategy must all carry. */
  tags: string[];
  minImportance: number;
  limit: number;
  offset: number;
  /** Also strategies whose lesson feedback withheld (effective quality below 0.5). */
  includeWithheld: boolean;
}

export interface StrategyView {
  id: string;
  /** The lesson the strategy was written with. */
  reflectionId: string;
  projectId: string;
  strategyText: string;
  /** The strategy's own importance: its lesson's, raised by 10 % (at most 1). */
  importance: number;
  tags: string[];
  createdAt: string;
  /** The lesson's signature and effective quality, and whether it is served. */
  lesson: { signature: string; effectiveQuality: number; served: boolean };
  /** Full-text rank of the query words; null without a text query. */
  rank: number | null;
}
