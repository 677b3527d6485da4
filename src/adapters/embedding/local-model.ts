import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as tokenizers from "@huggingface/tokenizers";
import * as ort from "onnxruntime-node";
import type { Pooling } from "../../domain/embedding/model-profiles.js";

/** The part of the tokenizer used here. */
export interface TextTokenizer {
  encode(text: string): { ids: number[] };
}

// The package's declarations import their siblings without file extensions, which NodeNext
// resolution cannot follow (the class types as an error type), so its shape is stated here.
const { Tokenizer } = tokenizers as unknown as {
  Tokenizer: new (tokenizerJson: object, tokenizerConfig: object) => TextTokenizer;
};

export interface LoadedModel {
  session: ort.InferenceSession;
  tokenizer: TextTokenizer;
  outputName: string;
}

export async function loadModel(modelDir: string): Promise<LoadedModel> {
  const tokenizer = new Tokenizer(
    JSON.parse(readFileSync(join(modelDir, "tokenizer.json"), "utf8")) as object,
    {},
  );
  const session = await ort.InferenceSession.create(join(modelDir, "model.onnx"), {
    executionProviders: ["cpu"],
    // Two threads for one run (the worker's and one more), which halves a long text's wait at the
    // same CPU. Idle threads must not spin-wait for work: by default they do, burning a core
    // next to the pipeline while the model has nothing to do.
    intraOpNumThreads: 2,
    interOpNumThreads: 1,
    extra: { session: { intra_op: { allow_spinning: "0" } } },
  });
  const outputName = session.outputNames[0];
  if (outputName === undefined) throw new Error(`the model in ${modelDir} has no output`);
  for (const input of ["input_ids", "attention_mask"]) {
    if (!session.inputNames.includes(input))
      throw new Error(`the model in ${modelDir} has no ${input} input: not a BERT-style encoder`);
  }
  return { session, tokenizer, outputName };
}

/** Token ids of each text, cut to `maxTokens` (the closing [SEP] kept, as the tokenizer's own truncation would). */
export function encodeTexts(tokenizer: TextTokenizer, texts: string[], maxTokens: number): number[][] {
  // A WordPiece token covers at least one character; 32 per token leaves room for long words
  // while sparing the tokenizer the rest of a very long trace.
  return texts.map((text) => {
    const { ids } = tokenizer.encode(text.slice(0, maxTokens * 32));
    if (ids.length <= maxTokens) return ids;
    return [...ids.slice(0, maxTokens - 1), ids[ids.length - 1] ?? 0];
  });
}

/**
 * Groups encoded texts into model runs of similar lengths (a run is padded to its longest text,
 * so a short text in a run of long ones costs as much as they do): at most `maxPerRun` texts, the
 * longest at most 1.5 times the shortest (plus 8 tokens). Returns indices into `encoded`.
 */
export function runsBySimilarLength(encoded: number[][], maxPerRun: number): number[][] {
  const order = encoded.map((ids, i) => ({ i, n: ids.length })).sort((a, b) => a.n - b.n);
  const runs: number[][] = [];
  let run: number[] = [];
  let shortest = 0;
  for (const { i, n } of order) {
    if (run.length > 0 && (run.length >= maxPerRun || n > shortest * 1.5 + 8)) {
      runs.push(run);
      run = [];
    }
    if (run.length === 0) shortest = n;
    run.push(i);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * One model run over already encoded texts, padded to the longest; the vector of a text is pooled
 * from its token vectors (`pool`), scaled to length 1, so a dot product is the cosine.
 * The run is synchronous inside ONNX Runtime's binding, which is why it runs on a worker thread.
 */
export async function runModel(
  { session, outputName }: LoadedModel,
  encoded: number[][],
  pooling: Pooling = "mean",
): Promise<number[][]> {
  if (encoded.length === 0) return [];
  const batch = encoded.length;
  const length = Math.max(...encoded.map((ids) => ids.length));
  const inputIds = new BigInt64Array(batch * length);
  const attentionMask = new BigInt64Array(batch * length);
  encoded.forEach((ids, row) => {
    ids.forEach((id, column) => {
      inputIds[row * length + column] = BigInt(id);
      attentionMask[row * length + column] = 1n;
    });
  });
  const dims = [batch, length];
  const feeds: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor("int64", inputIds, dims),
    attention_mask: new ort.Tensor("int64", attentionMask, dims),
  };
  if (session.inputNames.includes("token_type_ids"))
    feeds.token_type_ids = new ort.Tensor("int64", new BigInt64Array(batch * length), dims);
  const output = (await session.run(feeds))[outputName];
  if (output?.dims.length !== 3 || output.dims[0] !== batch || output.dims[1] !== length)
    throw new Error(`the local model returned an unexpected output shape ${String(output?.dims)}`);
  return pool(
    output.data as Float32Array,
    { length, width: Number(output.dims[2]) },
    encoded.map((ids) => ids.length),
    pooling,
  );
}

/**
 * One unit vector per text from the model's token vectors (`hidden`, texts × `length` tokens ×
 * `width`, row-major): `mean` averages the text's own tokens (its padding left out), `cls` takes
 * its first token ([CLS]). A zero vector stays zero.
 */
export function pool(
  hidden: ArrayLike<number>,
  shape: { length: number; width: number },
  tokens: readonly number[],
  pooling: Pooling,
): number[][] {
  const { length, width } = shape;
  return tokens.map((count, row) => {
    const vector = new Float64Array(width);
    // Every text has at least [CLS] and [SEP], so the mean is over one token or more.
    const used = pooling === "cls" ? 1 : Math.max(1, count);
    for (let column = 0; column < used; column += 1) {
      const offset = (row * length + column) * width;
      for (let d = 0; d < width; d += 1) vector[d] = (vector[d] ?? 0) + (hidden[offset + d] ?? 0);
    }
    let norm = 0;
    for (let d = 0; d < width; d += 1) {
      const mean = (vector[d] ?? 0) / used;
      vector[d] = mean;
      norm += mean * mean;
    }
    norm = Math.sqrt(norm) || 1;
    return Array.from(vector, (value) => value / norm);
  });
}
