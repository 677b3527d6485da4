/**
 * Dual storage: every stored lesson with a strategy also stores the strategy on its own,
 * ranked a little above the lesson it came from (+10 %, at most 1), so a search of strategies
 * surfaces them before the lessons they summarise.
 */
export function strategyImportance(lessonImportance: number): number {
  return Math.min(1, lessonImportance * 1.1);
}
