import { monitorEventLoopDelay } from "node:perf_hooks";
import { createHashingEmbedder } from "../src/adapters/embedding/hashing-embedder.js";
import { createLocalEmbedder } from "../src/adapters/embedding/local-embedder.js";
import { defaultEmbeddingModelDir } from "../src/config/llm-settings.js";
import type { Embedder } from "../src/pipeline/ports.js";
import type { BenchResult } from "./support.js";

/** The whole benchmark must finish within this; past it, it throws (and `npm run bench` fails). */
const deadlineMs = Number(process.env.BENCH_EMBEDDINGS_DEADLINE_MS ?? 120_000);

/** Texts of the lengths the pipeline embeds: task summaries, analyses and lessons (15–60 tokens). */
const texts = [
  "Book a hotel room in Lisbon for three nights from 12 March for two adults, under 150 EUR a night.",
  "The agent could not complete the hotel reservation: the booking service rejected the dates and the agent never retried with other nights, so no room was reserved.",
  "When a SQL query times out on a large table, add an index on the filtered column and paginate the scan instead of raising the statement timeout.",
  "Export last month's orders from the warehouse database to a CSV file.",
  "The tool call to the payments API failed with HTTP 502 three times in a row.",
  "Reserve accommodation in Portugal's capital for a long weekend.",
  "Summarise the customer's complaint and draft a polite reply offering a refund.",
  "Root cause: the agent trusted a stale cache entry for the exchange rate; lesson: re-read rates older than five minutes before quoting a price.",
  "Query on table orders exceeded its 30 s limit while joining shipments without an index.",
  "Translate the release notes into German and keep the product names in English.",
  "The planner agent handed the coder agent an outdated schema, so the migration it wrote dropped a column still in use.",
  "Retry a rate-limited request after the delay the server gives in Retry-After, not immediately.",
  "Find three flights from Berlin to Madrid on Friday morning and compare their prices.",
  "The search tool returned no results because the agent quoted the whole sentence as one phrase.",
  "Validate the user's address with the postal API before creating the shipment.",
  "The deployment failed: the container image tag did not exist in the registry.",
];

/** [a, b, related?]: related pairs share a task or a cause; unrelated ones share neither. */
const pairs: [number, number, boolean][] = [
  [0, 1, true], // hotel task ~ analysis of its booking failure
  [0, 5, true], // hotel task ~ its paraphrase (almost no shared word)
  [2, 8, true], // SQL timeout lesson ~ a query timeout failure
  [3, 8, true], // orders export ~ orders query timeout
  [0, 2, false], // hotel task ~ SQL lesson
  [1, 9, false], // booking failure ~ translation task
  [6, 15, false], // complaint reply ~ deployment failure
];

const dot = (a: number[], b: number[]) => a.reduce((sum, value, i) => sum + value * (b[i] ?? 0), 0);
const cosine = (a: number[], b: number[]) => dot(a, b) / (Math.sqrt(dot(a, a) * dot(b, b)) || 1);

/** Milliseconds per text when `texts` are embedded in calls of `batch`, over `rounds` passes. */
async function msPerText(embedder: Embedder, batch: number, rounds: number): Promise<number> {
  const started = performance.now();
  for (let round = 0; round < rounds; round += 1) {
    for (let i = 0; i < texts.length; i += batch) await embedder.embed(texts.slice(i, i + batch));
  }
  return (performance.now() - started) / (rounds * texts.length);
}

async function similarities(embedder: Embedder): Promise<number[]> {
  const vectors = await embedder.embed(texts);
  return pairs.map(([a, b]) => cosine(vectors[a] ?? [], vectors[b] ?? []));
}

async function measure(): Promise<BenchResult> {
  const loadStarted = performance.now();
  const local = createLocalEmbedder({ modelDir: defaultEmbeddingModelDir });
  await local.embed(["warm up"]);
  const loadMs = performance.now() - loadStarted;
  await msPerText(local, 16, 1);

  // The model runs inside the binding's synchronous call: the event loop waits for each batch.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const single = await msPerText(local, 1, 5);
  loopDelay.disable();
  const singleBlockMs = loopDelay.max / 1e6;
  loopDelay.reset();
  loopDelay.enable();
  const batch8 = await msPerText(local, 8, 5);
  const batch16 = await msPerText(local, 16, 5);
  loopDelay.disable();
  const batchBlockMs = loopDelay.max / 1e6;

  const localSims = await similarities(local);
  const hashingSims = await similarities(createHashingEmbedder());
  const related = localSims.filter((_, i) => pairs[i]?.[2]);
  const unrelated = localSims.filter((_, i) => !pairs[i]?.[2]);
  const lowestRelated = Math.min(...related);
  const highestUnrelated = Math.max(...unrelated);
  if (lowestRelated <= highestUnrelated) {
    throw new Error(
      `${local.name}: a related pair (${lowestRelated.toFixed(3)}) scored no higher than an unrelated one (${highestUnrelated.toFixed(3)})`,
    );
  }

  const ratio = batch16 / single;
  return {
    name: `embeddings (${local.name}, ${String(texts.length)} texts of 15–60 tokens)`,
    lines: [
      `model load + first text: ${loadMs.toFixed(0)} ms`,
      `batch 1: ${single.toFixed(2)} ms/text; batch 8: ${batch8.toFixed(2)} ms/text; batch 16: ${batch16.toFixed(2)} ms/text`,
      `longest event-loop stall: ${singleBlockMs.toFixed(1)} ms at batch 1, ${batchBlockMs.toFixed(1)} ms at batch 8/16`,
      "cosine similarity, local vs hashing-256:",
      ...pairs.map(
        ([a, b, isRelated], i) =>
          `  ${isRelated ? "related  " : "unrelated"} ${(localSims[i] ?? NaN).toFixed(3)}  ${(hashingSims[i] ?? NaN).toFixed(3)}  "${(texts[a] ?? "").slice(0, 38)}…" ~ "${(texts[b] ?? "").slice(0, 38)}…"`,
      ),
      `lowest related ${lowestRelated.toFixed(3)} > highest unrelated ${highestUnrelated.toFixed(3)}`,
    ],
    ratio,
    // Padding to the longest text costs compute, so batches of short texts of mixed lengths save
    // little on 2 cores; the goal is that one batched run costs no more per text than single runs.
    goal: "ms/text at batch 16 ÷ at batch 1 ≤ 1.25",
    met: ratio <= 1.25,
  };
}

/**
 * The local embedding model's cost and what it buys: milliseconds per text alone and in batches,
 * how long the event loop waits, and the similarity of related and unrelated pairs next to the
 * hashing fallback's. Needs the model (`npm run models`), not Kafka.
 */
export async function benchEmbeddings(): Promise<BenchResult> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`embeddings benchmark did not finish within ${String(deadlineMs)} ms`));
    }, deadlineMs);
  });
  try {
    return await Promise.race([measure(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
