import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { zipfWeight } from "../../domain/embedding/static-embedding.js";
import { applyTransform, whiteningOf } from "../../domain/embedding/whitening.js";
import { loadModel, type LoadedModel } from "./local-model.js";

/** The table of token vectors, float32 little-endian, vocabulary order. */
export const staticTableFile = "static-embeddings.f32";
/** What the table was made from and how: read before the table is trusted. */
export const staticMetaFile = "static-embeddings.json";

/**
 * The recipe's version: a table made by another recipe is made again. Bump it when the method
 * below changes (the vectors it gives change).
 */
export const staticRecipe = "token+context-sif1e-4-white-v2";

export interface StaticTableMeta {
  recipe: string;
  dimensions: number;
  vocabularySize: number;
  /** Byte size of the model.onnx it was distilled from: a new model gives a new table. */
  modelBytes: number;
  /** Characters and tokens of the reading corpus the tokens were seen in, in context. */
  corpusChars: number;
  corpusTokens: number;
  /**
   * First hex digits of a hash of the table: part of the embedder's name, so that vectors made
   * with another table (another model, corpus or recipe) are never compared with these.
   */
  fingerprint: string;
  /** Seconds the distillation took where it was made (for the record). */
  seconds: number;
}

interface Vocabulary {
  ids: Map<string, number>;
  size: number;
}

function readVocabulary(modelDir: string): Vocabulary {
  const json = JSON.parse(readFileSync(join(modelDir, "tokenizer.json"), "utf8")) as {
    model?: { type?: string; vocab?: Record<string, number> };
  };
  const vocab = json.model?.vocab;
  if (json.model?.type !== "WordPiece" || !vocab)
    throw new Error(`${modelDir}/tokenizer.json is not a WordPiece tokenizer`);
  const ids = new Map(Object.entries(vocab));
  return { ids, size: Math.max(...ids.values()) + 1 };
}

/** The table of `modelDir` is there and was made by this recipe from this model. */
export function staticTableCurrent(modelDir: string): boolean {
  const metaPath = join(modelDir, staticMetaFile);
  if (!existsSync(metaPath) || !existsSync(join(modelDir, staticTableFile))) return false;
  try {
    const meta = JSON.parse(readFileSync(metaPath, "utf8")) as Partial<StaticTableMeta>;
    return meta.recipe === staticRecipe && meta.modelBytes === statSync(join(modelDir, "model.onnx")).size;
  } catch {
    return false;
  }
}

/**
 * Prose from the documentation of the installed packages (README and other Markdown files, and the
 * doc comments of type declarations), read in the order of their sorted paths, each line once,
 * every k-th line kept so that about `maxChars` come from all of them: a reading corpus of technical
 * English that every machine with the project's dependencies has, the same for the same lock file.
 * Code, tables, links and short fragments are left out.
 */
export function readDocsCorpus(nodeModulesDir: string, maxChars: number): string {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && (entry.name.endsWith(".md") || entry.name.endsWith(".d.ts")))
        files.push(path);
    }
  };
  if (existsSync(nodeModulesDir)) walk(nodeModulesDir);
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const file of files) {
    const declarations = file.endsWith(".d.ts");
    let inCode = false;
    for (const raw of readFileSync(file, "utf8").split("\n")) {
      let line = raw.trim();
      if (declarations) {
        if (!line.startsWith("* ")) continue;
        line = line.slice(2).trim();
        if (line.startsWith("@")) continue;
      }
      if (line.startsWith("```")) {
        inCode = !inCode;
        continue;
      }
      if (inCode || /^[|<![#>*-]/.test(line) || /https?:|\]\(/.test(line)) continue;
      if (!/^[A-Za-z]/.test(line) || line.split(/\s+/).length < 5 || seen.has(line)) continue;
      seen.add(line);
      lines.push(line);
    }
  }
  const total = lines.reduce((sum, line) => sum + line.length + 1, 0);
  const every = Math.max(1, Math.round(total / maxChars));
  return lines.filter((_, i) => i % every === 0).join(" ");
}

/** Runs `rows` (token ids with [CLS] and [SEP]) through the model; the output of each token, row after row. */
async function hiddenStates(
  model: LoadedModel,
  rows: number[][],
): Promise<{ hidden: Float32Array; length: number; width: number }> {
  const batch = rows.length;
  const length = Math.max(...rows.map((row) => row.length));
  const inputIds = new BigInt64Array(batch * length);
  const mask = new BigInt64Array(batch * length);
  rows.forEach((row, r) => {
    row.forEach((id, c) => {
      inputIds[r * length + c] = BigInt(id);
      mask[r * length + c] = 1n;
    });
  });
  const dims = [batch, length];
  const feeds: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor("int64", inputIds, dims),
    attention_mask: new ort.Tensor("int64", mask, dims),
  };
  if (model.session.inputNames.includes("token_type_ids"))
    feeds.token_type_ids = new ort.Tensor("int64", new BigInt64Array(batch * length), dims);
  const output = (await model.session.run(feeds))[model.outputName];
  if (output?.dims.length !== 3) throw new Error("the model returned an unexpected output shape");
  return { hidden: output.data as Float32Array, length, width: Number(output.dims[2]) };
}

export interface DistilOptions {
  /** The reading corpus (readDocsCorpus); empty: tokens alone, no context and no whitening. */
  corpus: string;
  onProgress?: (step: string, done: number, total: number) => void;
}

/**
 * Distils static token vectors from the sentence model in `modelDir` (after Model2Vec, with
 * context). Steps:
 * 1. every vocabulary token through the model alone, as `[CLS] token [SEP]`, its vector the mean
 *    of the three outputs (as the model pools a sentence);
 * 2. the corpus through the model in passages of 128 tokens: each token's output in context is
 *    added to its token's sum, so a token seen in context gets the mean of its contextual outputs
 *    (with its vector alone counted as one more sighting); a text's mean of these is what the model
 *    itself averages, minus the context it cannot see;
 * 3. smooth-inverse-frequency weights (Zipf's law over the vocabulary's order), so that a text's
 *    mean leans on its rare, telling words;
 * 4. whitening (Σ^−½, as BERT-whitening does for sentence vectors) fitted on the corpus passages'
 *    vectors and folded into the table (the mean passage is subtracted from every row, so a text's
 *    mean of rows is centred too): averaged tokens share a few strong directions that would make
 *    every two texts look alike. Measured against power ¼, ¾ and 1 on real logs, ½ kept the most.
 * Special and unused tokens get zero vectors. Writes the table and its meta next to the model.
 */
export async function distilStaticTable(modelDir: string, options: DistilOptions): Promise<StaticTableMeta> {
  const started = performance.now();
  const vocabulary = readVocabulary(modelDir);
  const cls = vocabulary.ids.get("[CLS]");
  const sep = vocabulary.ids.get("[SEP]");
  if (cls === undefined || sep === undefined)
    throw new Error(`${modelDir}: the vocabulary has no [CLS] or [SEP]`);
  const model = await loadModel(modelDir);
  const size = vocabulary.size;
  let dimensions = 0;
  let table = new Float64Array(0);
  const batchSize = 512;
  for (let first = 0; first < size; first += batchSize) {
    const rows = Array.from({ length: Math.min(batchSize, size - first) }, (_, r) => [cls, first + r, sep]);
    const { hidden, width } = await hiddenStates(model, rows);
    if (dimensions === 0) {
      dimensions = width;
      table = new Float64Array(size * dimensions);
    }
    rows.forEach((_, r) => {
      for (let d = 0; d < width; d += 1) {
        const at = r * 3 * width + d;
        table[(first + r) * width + d] =
          ((hidden[at] ?? 0) + (hidden[at + width] ?? 0) + (hidden[at + 2 * width] ?? 0)) / 3;
      }
    });
    options.onProgress?.("tokens alone", first + rows.length, size);
  }

  // Tokens in context: every sighting adds its output; the vector alone counts as one sighting.
  const seen = new Float64Array(size).fill(1);
  const ids = model.tokenizer.encode(options.corpus).ids.filter((id) => id !== cls && id !== sep);
  const passage = 126;
  const passages: number[][] = [];
  for (let at = 0; at < ids.length; at += passage) passages.push(ids.slice(at, at + passage));
  for (let first = 0; first < passages.length; first += 16) {
    const rows = passages.slice(first, first + 16).map((p) => [cls, ...p, sep]);
    const { hidden, length, width } = await hiddenStates(model, rows);
    rows.forEach((row, r) => {
      for (let c = 1; c < row.length - 1; c += 1) {
        const id = row[c] ?? 0;
        seen[id] = (seen[id] ?? 0) + 1;
        const from = (r * length + c) * width;
        for (let d = 0; d < width; d += 1)
          table[id * width + d] = (table[id * width + d] ?? 0) + (hidden[from + d] ?? 0);
      }
    });
    options.onProgress?.("tokens in context", Math.min(first + 16, passages.length), passages.length);
  }
  await model.session.release();

  // Tokens that never stand for text: [PAD], [CLS], [SEP], [MASK], [UNK] and the [unusedN] slots.
  const silent = new Set<number>();
  for (const [token, id] of vocabulary.ids) if (/^\[[A-Za-z0-9]+\]$/.test(token)) silent.add(id);
  for (let id = 0; id < size; id += 1) {
    const weight = silent.has(id) ? 0 : zipfWeight(id, size) / (seen[id] ?? 1);
    for (let d = 0; d < dimensions; d += 1)
      table[id * dimensions + d] = (table[id * dimensions + d] ?? 0) * weight;
  }

  const out = new Float32Array(size * dimensions);
  if (passages.length >= dimensions) {
    const samples = passages.map((p) => {
      const v = new Float64Array(dimensions);
      for (const id of p)
        for (let d = 0; d < dimensions; d += 1)
          v[d] = (v[d] ?? 0) + (table[id * dimensions + d] ?? 0) / p.length;
      return v;
    });
    const { mean, transform } = whiteningOf(samples, dimensions, 0.5);
    const shift = applyTransform(mean, transform, dimensions);
    for (let id = 0; id < size; id += 1) {
      if (silent.has(id)) continue;
      const row = applyTransform(
        table.subarray(id * dimensions, (id + 1) * dimensions),
        transform,
        dimensions,
      );
      for (let d = 0; d < dimensions; d += 1) out[id * dimensions + d] = (row[d] ?? 0) - (shift[d] ?? 0);
    }
  } else {
    out.set(table);
  }

  const bytes = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  const meta: StaticTableMeta = {
    recipe: staticRecipe,
    dimensions,
    vocabularySize: size,
    modelBytes: statSync(join(modelDir, "model.onnx")).size,
    corpusChars: options.corpus.length,
    corpusTokens: ids.length,
    fingerprint: createHash("sha256").update(bytes).digest("hex").slice(0, 8),
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
  // Written beside, then renamed: a reader never sees half a table, and the meta comes last.
  const tablePath = join(modelDir, staticTableFile);
  writeFileSync(`${tablePath}.tmp`, bytes);
  renameSync(`${tablePath}.tmp`, tablePath);
  const metaPath = join(modelDir, staticMetaFile);
  writeFileSync(`${metaPath}.tmp`, `${JSON.stringify(meta, null, 2)}\n`);
  renameSync(`${metaPath}.tmp`, metaPath);
  return meta;
}
