import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { Worker } from "node:worker_threads";
import { ReflectorError } from "../../domain/errors.js";
import type { Embedder } from "../../pipeline/ports.js";
import type { EmbedReply, EmbedRequest, WorkerOptions } from "./embedding-worker.js";
import {
  defaultModelName,
  modelProfile,
  prefixed,
  type ModelProfile,
} from "../../domain/embedding/model-profiles.js";

/** What a model directory must hold: a BERT-style encoder in ONNX and its Hugging Face tokenizer. */
export const localModelFiles = ["model.onnx", "tokenizer.json"] as const;

/** How the model is fetched, named in the error a missing model gives. */
export const fetchModelCommand = "bash scripts/services.sh models";

export interface LocalEmbedderOptions {
  /** Directory with `model.onnx` and `tokenizer.json`; its name is the model's name. */
  modelDir: string;
  /** The model's conventions (src/domain/embedding/model-profiles.ts); default all-MiniLM-L6-v2's. */
  profile?: ModelProfile;
  /** Tokens per text, [CLS] and [SEP] included; longer texts are cut (default the profile's). */
  maxTokens?: number;
  /** Whether ONNX Runtime can be loaded (default: resolved from this install); for tests. */
  runtimeInstalled?: () => boolean;
}

/**
 * Whether ONNX Runtime is installed: an optional dependency, needed only by the local model (and
 * to distil the static table), so an install that never runs the model can leave its native
 * libraries out (`npm ci --omit=optional`).
 */
export function onnxRuntimeInstalled(): boolean {
  try {
    import.meta.resolve("onnxruntime-node");
    return true;
  } catch {
    return false;
  }
}

/** The files of `modelDir` that are missing; empty when the model is there. */
export function missingModelFiles(modelDir: string): string[] {
  return localModelFiles.filter((file) => !existsSync(join(modelDir, file)));
}

/**
 * The worker thread's entry. A build runs the compiled module next to this one. Run from source
 * (tsx, vitest), the worker starts from a small module that first registers tsx's loader in the
 * worker, then imports the TypeScript entry: a worker does not inherit the loader of the thread
 * that started it, and flags in `execArgv` depend on how that thread was started.
 */
function workerEntry(): URL {
  if (!import.meta.url.endsWith(".ts")) return new URL("./embedding-worker.js", import.meta.url);
  const tsx = import.meta.resolve("tsx/esm/api");
  const entry = new URL("./embedding-worker.ts", import.meta.url).href;
  const source = `const { register } = await import(${JSON.stringify(tsx)}); register(); await import(${JSON.stringify(entry)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}

/**
 * Sentence embeddings from a local model (all-MiniLM-L6-v2 by default) run on the CPU with ONNX
 * Runtime: closeness of meaning, offline and free. The vector of a text is pooled from its token
 * vectors as its profile says (the mean, padding left out, or [CLS]), scaled to length 1, so a dot
 * product is the cosine. A query (a task asking for lessons) and a passage (anything stored) get
 * the profile's prefix for their role before the model reads them.
 *
 * The model runs on a worker thread (embedding-worker.ts): its run is synchronous inside ONNX
 * Runtime's binding, and on the main thread it held every other callback for its duration (5 ms
 * for a short text, more for a long one), which made Postgres and Redis calls wait behind it.
 * Calls that arrive while a run is going on share the next run.
 */
export function createLocalEmbedder(options: LocalEmbedderOptions): Embedder {
  const { modelDir } = options;
  const profile = options.profile ?? modelProfile(defaultModelName);
  const workerOptions: WorkerOptions = {
    modelDir,
    maxTokens: options.maxTokens ?? profile.maxTokens,
    pooling: profile.pooling,
    maxRunTexts: profile.quantised ? 1 : 16,
  };
  // Checked now, at start-up, rather than at the first event: a processor without its model
  // should not join the consumer group and then fail every event.
  if (!(options.runtimeInstalled ?? onnxRuntimeInstalled)()) {
    throw new ReflectorError(
      "CONFIG_INVALID",
      "the local embedding model needs onnxruntime-node, an optional dependency this install left out " +
        "(npm ci --omit=optional). Install it with `npm install onnxruntime-node`, " +
        "or choose another embedder with REFLECTOR_EMBEDDINGS (the default, static, needs none)",
    );
  }
  const missing = missingModelFiles(modelDir);
  if (missing.length > 0) {
    throw new ReflectorError(
      "CONFIG_INVALID",
      `local embedding model not found: ${modelDir} lacks ${missing.join(" and ")}. ` +
        `Fetch it with \`${fetchModelCommand}\`, point REFLECTOR_EMBEDDING_MODEL_DIR at a copy, ` +
        `or choose another embedder with REFLECTOR_EMBEDDINGS`,
    );
  }
  const pending = new Map<number, { resolve: (v: number[][]) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let worker: Worker | null = null;

  function started(): Worker {
    if (worker) return worker;
    const w = new Worker(workerEntry(), { workerData: workerOptions, execArgv: [] });
    // The thread keeps the process alive only while a call waits for it.
    w.unref();
    w.on("message", (reply: EmbedReply) => {
      const call = pending.get(reply.id);
      if (!call) return;
      pending.delete(reply.id);
      if (pending.size === 0) w.unref();
      if ("error" in reply) call.reject(new Error(`local embedder: ${reply.error}`));
      else call.resolve(reply.vectors);
    });
    const fail = (err: Error) => {
      if (worker === w) worker = null;
      for (const call of pending.values()) call.reject(new Error(`local embedder: ${err.message}`));
      pending.clear();
    };
    w.on("error", fail);
    w.on("exit", (code) => {
      fail(new Error(`worker exited with code ${String(code)}`));
    });
    worker = w;
    return w;
  }

  return {
    name: `local:${basename(modelDir)}`,
    // The profile's (all-MiniLM-L6-v2: measured on the labelled calibration set, `npm run bench --
    // calibration`: a good analysis against another task has a median cosine of 0.16; against its
    // own task, 0.55, 10th percentile 0.38. An analysis and a task are different kinds of text, so
    // a plainly relevant pair rarely passes 0.6 raw).
    similarityScale: profile.similarityScale,
    embed(texts, _tenantId, role = "passage") {
      if (texts.length === 0) return Promise.resolve([]);
      return new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        const w = started();
        w.ref();
        w.postMessage({ id, texts: prefixed(profile, role, texts) } satisfies EmbedRequest);
      });
    },
  };
}
