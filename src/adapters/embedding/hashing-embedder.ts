import { embedText } from "../../domain/embedding/hashing-embedding.js";
import type { Embedder } from "../../pipeline/ports.js";

/**
 * Offline, deterministic embeddings by feature hashing: lexical overlap, not meaning. A fallback
 * for where the local model cannot run; the judge and memory are weaker with it.
 */
export function createHashingEmbedder(dimensions = 256): Embedder {
  return {
    name: `hashing-${dimensions}`,
    // Measured on the labelled calibration set: a good analysis against another task has a median
    // cosine of 0.02, against its own task 0.18 (10th percentile 0.05): words, not meaning, so
    // relevance is weak evidence with this embedder.
    similarityScale: { unrelated: 0.02, related: 0.2 },
    embed: (texts) => Promise.resolve(texts.map((text) => embedText(text, dimensions))),
  };
}
