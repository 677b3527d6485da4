/**
 * A deterministic offline text embedding: feature hashing of word unigrams and bigrams into a
 * fixed number of signed buckets, L2-normalised. Similar wording gives similar vectors; similar
 * meaning in other words does not. It is what relevance and novelty use when no embeddings
 * endpoint is configured, and it is labelled as such.
 */

const stopWords = new Set(
  "a an the of on in to for and or with is are was were be been it its this that at by from as into than then so not no".split(
    " ",
  ),
);

function stem(word: string): string {
  for (const suffix of ["ing", "ed", "es", "s"]) {
    if (word.length > suffix.length + 3 && word.endsWith(suffix)) return word.slice(0, -suffix.length);
  }
  return word;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export function tokens(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9_]+/g) ?? []).filter((w) => !stopWords.has(w)).map(stem);
}

export function embedText(text: string, dimensions = 256): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const words = tokens(text);
  const features = [...words, ...words.slice(1).map((w, i) => `${words[i] ?? ""} ${w}`)];
  for (const feature of features) {
    const hash = fnv1a(feature);
    const bucket = hash % dimensions;
    vector[bucket] = (vector[bucket] ?? 0) + (hash >>> 31 === 1 ? -1 : 1);
  }
  const norm = Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
  return norm === 0 ? vector : vector.map((v) => v / norm);
}

export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
