import type { PatternEvidence, ReflectionStore } from "../../pipeline/ports.js";

/**
 * The store with its pattern-evidence reads shared: a caller that asks for a tenant's pattern
 * while a read of that same pattern is running gets that read's answer instead of a read of its
 * own. The read is a full-text ranking of every episode of the tenant that matches the pattern
 * (`pg-reflection-store`), the largest Postgres cost of a drain: with many events in flight, the
 * recurrences of one lesson (and new failures whose lessons name the same pattern) asked for the
 * same evidence hundreds of times at once (753 reads in a 5,000-event e2e run with 256 in flight).
 * The shared answer is at most one read older than a read of its own would have been, as if the
 * caller had started when the running read did; nothing is kept once it is answered.
 */
export function sharePatternEvidence<S extends Pick<ReflectionStore, "patternEvidence">>(store: S): S {
  const running = new Map<string, Promise<PatternEvidence>>();

  function evidence(tenantId: string, pattern: string): Promise<PatternEvidence> {
    const key = `${tenantId}\u0000${pattern}`;
    const shared = running.get(key);
    if (shared) return shared;
    const read = store
      .patternEvidence(tenantId, [pattern])
      .then((found) => found.get(pattern) ?? { occurrences: 0, total: 0 });
    running.set(key, read);
    const forget = () => {
      if (running.get(key) === read) running.delete(key);
    };
    read.then(forget, forget);
    return read;
  }

  return {
    ...store,
    patternEvidence: async (tenantId: string, patterns: string[]) =>
      new Map(
        await Promise.all(
          [...new Set(patterns)].map(
            async (pattern) => [pattern, await evidence(tenantId, pattern)] as const,
          ),
        ),
      ),
  };
}
