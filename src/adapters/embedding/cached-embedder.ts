import type { Embedder } from "../../pipeline/ports.js";

/**
 * Remembers the vectors of the last `maxEntries` texts. The same failure recurs with the same
 * trace text (the processor masks ids and numbers before embedding it), and a model run costs
 * milliseconds of CPU where a map lookup costs nothing; texts are compared whole, so a hit is
 * exactly the vector the model would give.
 */
export function createCachedEmbedder(inner: Embedder, maxEntries = 2_000): Embedder {
  const cache = new Map<string, number[]>();
  return {
    name: inner.name,
    ...(inner.similarityScale ? { similarityScale: inner.similarityScale } : {}),
    async embed(texts, tenantId, role = "passage") {
      // A query and a passage of the same words are different inputs to a model with prefixes.
      const keyOf = (text: string) => (role === "passage" ? text : `${role}\u0000${text}`);
      const missing = [...new Set(texts.filter((text) => !cache.has(keyOf(text))))];
      const fresh = missing.length > 0 ? await inner.embed(missing, tenantId, role) : [];
      missing.forEach((text, i) => {
        const vector = fresh[i];
        if (vector) cache.set(keyOf(text), vector);
      });
      const vectors = texts.map((text) => {
        const key = keyOf(text);
        const vector = cache.get(key);
        if (!vector) throw new Error("embedder returned no vector");
        // Touch: a recurring text stays while others come and go.
        cache.delete(key);
        cache.set(key, vector);
        return vector;
      });
      // A Map iterates in insertion order: the first keys are the least recently used.
      for (const oldest of cache.keys()) {
        if (cache.size <= maxEntries) break;
        cache.delete(oldest);
      }
      return vectors;
    },
  };
}
