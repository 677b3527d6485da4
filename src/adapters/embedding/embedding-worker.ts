import { parentPort, workerData } from "node:worker_threads";
import { encodeTexts, loadModel, runModel, runsBySimilarLength, type LoadedModel } from "./local-model.js";

/** What the local embedder sends: texts to embed under an id; and what it gets back. */
export interface EmbedRequest {
  id: number;
  texts: string[];
}
export type EmbedReply = { id: number; vectors: number[][] } | { id: number; error: string };

/** The most texts one model run takes. */
const maxRunTexts = 16;

/** Vectors of `texts`, in order, from runs of texts of similar lengths. */
async function embedAll(model: LoadedModel, texts: string[], maxTokens: number): Promise<number[][]> {
  const encoded = encodeTexts(model.tokenizer, texts, maxTokens);
  const vectors: number[][] = new Array<number[]>(texts.length);
  for (const run of runsBySimilarLength(encoded, maxRunTexts)) {
    const out = await runModel(
      model,
      run.map((i) => encoded[i] ?? []),
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
function serve(port: NonNullable<typeof parentPort>, options: { modelDir: string; maxTokens: number }) {
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
          options.maxTokens,
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

if (parentPort) serve(parentPort, workerData as { modelDir: string; maxTokens: number });
