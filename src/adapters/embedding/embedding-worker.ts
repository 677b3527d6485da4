import { parentPort, workerData } from "node:worker_threads";
import { encodeTexts, loadModel, runModel, runsBySimilarLength, type LoadedModel } from "./local-model.js";
import type { Pooling } from "../../domain/embedding/model-profiles.js";

/** What the local embedder sends: texts to embed under an id; and what it gets back. */
export interface EmbedRequest {
  id: number;
  texts: string[];
}
export type EmbedReply = { id: number; vectors: number[][] } | { id: number; error: string };

/** How the worker runs its model (the profile's part the thread needs). */
export interface WorkerOptions {
  modelDir: string;
  maxTokens: number;
  pooling: Pooling;
  /** The most texts one model run takes: 16, or 1 for a quantised model (its vectors depend on the run). */
  maxRunTexts: number;
}

/** Vectors of `texts`, in order, from runs of texts of similar lengths. */
async function embedAll(model: LoadedModel, texts: string[], options: WorkerOptions): Promise<number[][]> {
  const encoded = encodeTexts(model.tokenizer, texts, options.maxTokens);
  const vectors: number[][] = new Array<number[]>(texts.length);
  for (const run of runsBySimilarLength(encoded, options.maxRunTexts)) {
    const out = await runModel(
      model,
      run.map((i) => encoded[i] ?? []),
      options.pooling,
    );
    run.forEach((i, k) => (vectors[i] = out[k] ?? []));
  }
  return vectors;
}

/**
 * The local model on its own thread: ONNX Runtime's run is synchronous, and on the main thread it
 * would hold every Kafka, Postgres and Redis callback for its duration. Requests that arrive while
 * a run is going on are answered together by the next run.
 */
function serve(port: NonNullable<typeof parentPort>, options: WorkerOptions) {
  let model: Promise<LoadedModel> | null = null;
  const queue: EmbedRequest[] = [];
  let scheduled = false;

  async function drain(): Promise<void> {
    scheduled = false;
    while (queue.length > 0) {
      // Everything that arrived while the last runs went on is answered by the next ones.
      const batch = queue.splice(0, queue.length);
      try {
        model ??= loadModel(options.modelDir);
        const vectors = await embedAll(
          await model,
          batch.flatMap((r) => r.texts),
          options,
        );
        let at = 0;
        for (const request of batch) {
          port.postMessage({
            id: request.id,
            vectors: vectors.slice(at, at + request.texts.length),
          } satisfies EmbedReply);
          at += request.texts.length;
        }
      } catch (err) {
        model = null;
        const error = err instanceof Error ? err.message : String(err);
        for (const request of batch) port.postMessage({ id: request.id, error } satisfies EmbedReply);
      }
    }
  }

  port.on("message", (request: EmbedRequest) => {
    queue.push(request);
    if (!scheduled) {
      scheduled = true;
      // After the messages already waiting are queued too: they share the run.
      setImmediate(() => void drain());
    }
  });
}

if (parentPort) serve(parentPort, workerData as WorkerOptions);
