import { embedText } from "../../domain/embedding/hashing-embedding.js";
import type { Embedder } from "../../pipeline/ports.js";

/**
 * Offline, deterministic embeddings by feature hashing: lexical overlap, not meaning. A fallback
 * for where the local model cannot run; the judge and memory are weaker with it.
 */
export function createHashingEmbedder(dimensions = 256): Embedder {
  return {
    name: `hashing-${dimensions}`,
    // Texts sharing no words score ~0; an analysis of its own task shares only some (~0.2–0.4).
    similarityScale: { unrelated: 0.05, related: 0.35 },
    embed: (texts) => Promise.resolve(texts.map((text) => embedText(text, dimensions))),
  };
}
