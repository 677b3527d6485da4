import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import * as tokenizers from "@huggingface/tokenizers";
import { meanOfTokens, tokenCount, type TokenTable } from "../../domain/embedding/static-embedding.js";
import { ReflectorError } from "../../domain/errors.js";
import type { Embedder } from "../../pipeline/ports.js";
import { fetchModelCommand } from "./local-embedder.js";
import { staticMetaFile, staticTableFile, type StaticTableMeta } from "./static-distillation.js";

interface WordPieceTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): { ids: number[] };
}

// The package's declarations import their siblings without file extensions, which NodeNext
// resolution cannot follow, so its shape is stated here (as in local-model.ts).
const { Tokenizer } = tokenizers as unknown as {
  Tokenizer: new (tokenizerJson: object, tokenizerConfig: object) => WordPieceTokenizer;
};

export interface StaticEmbedderOptions {
  /** The local model's directory: its tokenizer.json and the table `npm run models` distilled from it. */
  modelDir: string;
  /** Tokens per text; the rest of a longer text is not read. */
  maxTokens?: number;
}

/** The files of `modelDir` the static embedder needs that are missing; empty when they are there. */
export function missingStaticFiles(modelDir: string): string[] {
  return ["tokenizer.json", staticTableFile, staticMetaFile].filter(
    (file) => !existsSync(join(modelDir, file)),
  );
}

/** Reads the table distilled next to the model, checked against its meta. */
export function loadTokenTable(modelDir: string): TokenTable & { meta: StaticTableMeta } {
  const meta = JSON.parse(readFileSync(join(modelDir, staticMetaFile), "utf8")) as StaticTableMeta;
  const bytes = readFileSync(join(modelDir, staticTableFile));
  // A copy into a buffer of its own: the file's bytes need not sit at a float's alignment.
  const vectors = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(vectors.buffer).set(bytes);
  const table = { dimensions: meta.dimensions, vectors, meta };
  if (tokenCount(table) !== meta.vocabularySize || vectors.length !== meta.vocabularySize * meta.dimensions)
    throw new Error(
      `${join(modelDir, staticTableFile)} does not hold ${String(meta.vocabularySize)} vectors: distil it again`,
    );
  return table;
}

/**
 * Sentence embeddings at the cost of a lookup: the local model's meaning distilled into one vector
 * per vocabulary token (static-distillation.ts, made once by `npm run models`); a text's vector is
 * the mean of its WordPiece tokens' vectors, from the model's own tokenizer. No model runs here, so
 * it runs on the calling thread: a text costs its tokenisation and one addition per token.
 */
export function createStaticEmbedder(options: StaticEmbedderOptions): Embedder {
  const { modelDir } = options;
  const maxTokens = options.maxTokens ?? 256;
  const missing = missingStaticFiles(modelDir);
  if (missing.length > 0) {
    throw new ReflectorError(
      "CONFIG_INVALID",
      `static embeddings not found: ${modelDir} lacks ${missing.join(" and ")}. ` +
        `Make them with \`${fetchModelCommand}\` (it fetches the model and distils its token vectors), ` +
        `point REFLECTOR_EMBEDDING_MODEL_DIR at a copy, or choose another embedder with REFLECTOR_EMBEDDINGS`,
    );
  }
  const table = loadTokenTable(modelDir);
  const tokenizer = new Tokenizer(
    JSON.parse(readFileSync(join(modelDir, "tokenizer.json"), "utf8")) as object,
    {},
  );
  // A WordPiece token covers a few characters; 8 per token leaves room for ids and code while
  // sparing the tokenizer the rest of a very long trace.
  const maxChars = maxTokens * 8;
  const vectorOf = (text: string): number[] => {
    const { ids } = tokenizer.encode(text.slice(0, maxChars), { add_special_tokens: false });
    return meanOfTokens(table, ids.length > maxTokens ? ids.slice(0, maxTokens) : ids);
  };
  return {
    // The table's fingerprint is in the name: vectors are stored under it and only compared with
    // vectors of the same name.
    name: `static:${basename(modelDir)}@${table.meta.fingerprint}`,
    // Measured on the labelled calibration set (`npm run bench -- embedder-quality`): a good
    // analysis against another task has a median cosine of 0.24, against its own task 0.66 (10th
    // percentile 0.35); the local model's 0.17 and 0.65. The scale puts both medians where the
    // local model's scale puts its own, so the relevance threshold means the same with either.
    similarityScale: { unrelated: 0.22, related: 0.53 },
    embed: (texts) => Promise.resolve(texts.map(vectorOf)),
  };
}
