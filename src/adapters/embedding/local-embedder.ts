import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import * as tokenizers from "@huggingface/tokenizers";
import * as ort from "onnxruntime-node";
import type { Embedder } from "../../pipeline/ports.js";

/** What a model directory must hold: a BERT-style encoder in ONNX and its Hugging Face tokenizer. */
export const localModelFiles = ["model.onnx", "tokenizer.json"] as const;

/** How the model is fetched, named in the error a missing model gives. */
export const fetchModelCommand = "bash scripts/services.sh models";

export interface LocalEmbedderOptions {
  /** Directory with `model.onnx` and `tokenizer.json`; its name is the model's name. */
  modelDir: string;
  /** Tokens per text, [CLS] and [SEP] included; longer texts are cut (the model saw 256 at most). */
  maxTokens?: number;
}

/** The files of `modelDir` that are missing; empty when the model is there. */
export function missingModelFiles(modelDir: string): string[] {
  return localModelFiles.filter((file) => !existsSync(join(modelDir, file)));
}

/** The part of the tokenizer used here. */
interface TextTokenizer {
  encode(text: string): { ids: number[] };
}

// The package's declarations import their siblings without file extensions, which NodeNext
// resolution cannot follow (the class types as an error type), so its shape is stated here.
const { Tokenizer } = tokenizers as unknown as {
  Tokenizer: new (tokenizerJson: object, tokenizerConfig: object) => TextTokenizer;
};

interface LoadedModel {
  session: ort.InferenceSession;
  tokenizer: TextTokenizer;
  outputName: string;
}

async function loadModel(modelDir: string): Promise<LoadedModel> {
  const tokenizer = new Tokenizer(
    JSON.parse(readFileSync(join(modelDir, "tokenizer.json"), "utf8")) as object,
    {},
  );
  const session = await ort.InferenceSession.create(join(modelDir, "model.onnx"), {
    executionProviders: ["cpu"],
  });
  const outputName = session.outputNames[0];
  if (outputName === undefined) throw new Error(`the model in ${modelDir} has no output`);
  for (const input of ["input_ids", "attention_mask"]) {
    if (!session.inputNames.includes(input))
      throw new Error(`the model in ${modelDir} has no ${input} input: not a BERT-style encoder`);
  }
  return { session, tokenizer, outputName };
}

/**
 * Sentence embeddings from a local model (all-MiniLM-L6-v2 by default) run on the CPU with ONNX
 * Runtime: closeness of meaning, offline and free. One `embed` call is one batched model run, padded
 * to its longest text; the vector of a text is the mean of its token vectors (padding left out),
 * scaled to length 1, so a dot product is the cosine.
 *
 * The run is synchronous inside ONNX Runtime's binding: it holds the event loop for its duration
 * (about 5 ms for a 35-token text; docs/benchmarks.md has the figures). Callers embed a few short
 * texts per event, so this stays small next to an LLM call.
 */
export function createLocalEmbedder(options: LocalEmbedderOptions): Embedder {
  const { modelDir } = options;
  const maxTokens = options.maxTokens ?? 256;
  // Checked now, at start-up, rather than at the first event: a processor without its model
  // should not join the consumer group and then fail every event.
  const missing = missingModelFiles(modelDir);
  if (missing.length > 0) {
    throw new Error(
      `local embedding model not found: ${modelDir} lacks ${missing.join(" and ")}. ` +
        `Fetch it with \`${fetchModelCommand}\`, point REFLECTOR_EMBEDDING_MODEL_DIR at a copy, ` +
        `or choose another embedder with REFLECTOR_EMBEDDINGS`,
    );
  }
  let loading: Promise<LoadedModel> | undefined;
  const model = (): Promise<LoadedModel> => {
    loading ??= loadModel(modelDir).catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };

  return {
    name: `local:${basename(modelDir)}`,
    // Measured on the labelled calibration set (`npm run bench -- calibration`): a good analysis
    // against another task has a median cosine of 0.16; against its own task, 0.55 (10th
    // percentile 0.38). An analysis and a task are different kinds of text, so a plainly relevant
    // pair rarely passes 0.6 raw.
    similarityScale: { unrelated: 0.15, related: 0.5 },
    async embed(texts) {
      if (texts.length === 0) return [];
      const { session, tokenizer, outputName } = await model();
      // A WordPiece token covers at least one character; 32 per token leaves room for long words
      // while sparing the tokenizer the rest of a very long trace.
      const encoded = texts.map((text) => {
        const { ids } = tokenizer.encode(text.slice(0, maxTokens * 32));
        if (ids.length <= maxTokens) return ids;
        // Keep the closing special token ([SEP]), as the tokenizer's own truncation would.
        return [...ids.slice(0, maxTokens - 1), ids[ids.length - 1] ?? 0];
      });
      const batch = texts.length;
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
      const hidden = output.data as Float32Array;
      const width = Number(output.dims[2]);
      return encoded.map((ids, row) => {
        const vector = new Float64Array(width);
        for (let column = 0; column < ids.length; column += 1) {
          const offset = (row * length + column) * width;
          for (let d = 0; d < width; d += 1) vector[d] = (vector[d] ?? 0) + (hidden[offset + d] ?? 0);
        }
        // Every text has at least [CLS] and [SEP], so the mean is over one token or more.
        let norm = 0;
        for (let d = 0; d < width; d += 1) {
          const mean = (vector[d] ?? 0) / ids.length;
          vector[d] = mean;
          norm += mean * mean;
        }
        norm = Math.sqrt(norm) || 1;
        return Array.from(vector, (value) => value / norm);
      });
    },
  };
}
