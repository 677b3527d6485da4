import { embedText } from "../../domain/embedding/hashing-embedding.js";
import type { Embedder } from "../../pipeline/ports.js";

/** Offline, deterministic embeddings by feature hashing: lexical overlap, not meaning. */
export function createHashingEmbedder(dimensions = 256): Embedder {
  return {
    name: `hashing-${dimensions}`,
    embed: (texts) => Promise.resolve(texts.map((text) => embedText(text, dimensions))),
  };
}
