/**
 * Static token embeddings: one fixed vector per vocabulary token, distilled once from a sentence
 * model (each token run through the model alone), and a text's vector is the mean of its tokens'
 * vectors. Meaning close to the model's at the cost of a table lookup per token.
 */

/** A vocabulary's token vectors, row after row: token `id`'s vector is `vectors[id * dimensions ...]`. */
export interface TokenTable {
  readonly dimensions: number;
  readonly vectors: Float32Array;
}

/** The number of tokens a table holds. */
export function tokenCount(table: TokenTable): number {
  return Math.floor(table.vectors.length / table.dimensions);
}

/**
 * The vector of a text from its token ids: the mean of the tokens' rows, scaled to length 1 (so a
 * dot product is the cosine). Ids outside the table are skipped; a text with no known token gets
 * the zero vector, which is unrelated to everything.
 */
export function meanOfTokens(table: TokenTable, ids: readonly number[]): number[] {
  const { dimensions, vectors } = table;
  const count = tokenCount(table);
  const sum = new Float64Array(dimensions);
  for (const id of ids) {
    if (id < 0 || id >= count) continue;
    const offset = id * dimensions;
    for (let d = 0; d < dimensions; d += 1) sum[d] = (sum[d] ?? 0) + (vectors[offset + d] ?? 0);
  }
  let norm = 0;
  for (let d = 0; d < dimensions; d += 1) norm += (sum[d] ?? 0) ** 2;
  norm = Math.sqrt(norm);
  if (norm === 0) return Array.from(sum);
  return Array.from(sum, (value) => value / norm);
}

/**
 * How much a token counts, from its rank in a vocabulary ordered roughly by frequency (WordPiece
 * vocabularies are): smooth inverse frequency, `a / (a + p)`, with `p` the token's probability under
 * Zipf's law. Frequent words ("the", "of") weigh little, rare ones nearly 1.
 */
export function zipfWeight(rank: number, vocabularySize: number, coefficient = 1e-4): number {
  // The harmonic number of the vocabulary: what the Zipf probabilities are divided by.
  const harmonic = Math.log(vocabularySize + 1) + 0.5772156649;
  const probability = 1 / ((rank + 2) * harmonic);
  return coefficient / (coefficient + probability);
}
