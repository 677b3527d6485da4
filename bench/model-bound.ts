import { cpus } from "node:os";
import { createCachedEmbedder } from "../src/adapters/embedding/cached-embedder.js";
import { createLocalEmbedder } from "../src/adapters/embedding/local-embedder.js";
import { defaultEmbeddingModelDir } from "../src/config/config.js";
import type { Embedder } from "../src/pipeline/ports.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../test/support/fakes.js";
import { benchEvent, report, withDeadline, type BenchResult } from "./support.js";

/** The local model behind a counter: texts it was asked for, wall time its runs took, and calls. */
function counted(inner: Embedder) {
  const stats = { calls: 0, texts: 0, ms: 0 };
  const embedder: Embedder = {
    ...inner,
    async embed(texts) {
      const start = performance.now();
      try {
        return await inner.embed(texts);
      } finally {
        stats.calls += 1;
        stats.texts += texts.length;
        stats.ms += performance.now() - start;
      }
    },
  };
  return { embedder, stats };
}

/**
 * What the default embedder (the local model) alone costs per new signature, and the bounds that
 * follow for the e2e and latency benchmarks, which run the same events (`benchEvent`) through the
 * same processor. Only the model is real here: the store and index are in memory, so every
 * millisecond measured is the model's (or the processor's CPU beside it).
 *
 * A new signature's texts: its trace (for matching), its task (relevance) and, per judged
 * attempt, the reflection body (novelty) and its analysis (relevance). They are four different
 * texts, each needed by the verdict; recurring failures hit the embedder's cache.
 *
 * 1. one new signature at a time: texts sent to the model and its time per signature;
 * 2. a burst: all of them at once, as the latency benchmark's first second delivers them (the
 *    model's worker answers concurrent calls in shared runs): the best throughput it reaches.
 */
export function benchModelBound(signatures = Number(process.env.BENCH_MODEL_SIGNATURES ?? 75)) {
  // A model that stops answering must fail the run, not hang it.
  return withDeadline("model-bound", Number(process.env.BENCH_MODEL_DEADLINE_MS ?? 900_000), () =>
    measure(signatures),
  );
}

async function measure(signatures: number): Promise<BenchResult> {
  const local = createLocalEmbedder({ modelDir: defaultEmbeddingModelDir });
  // Loading the model is start-up, not per-signature work.
  await local.embed(["warm-up: the model loads once per process"]);

  // 1. One at a time.
  const one = counted(local);
  const sequential = createOfflineProcessor(
    { store: createFakeStore().store, index: createFakeIndex().index },
    { embedder: createCachedEmbedder(one.embedder) },
  );
  const cpuBefore = process.cpuUsage();
  const sequentialStart = performance.now();
  for (let i = 0; i < signatures; i += 1) await sequential.process(benchEvent("bound-a", i, i));
  const sequentialMs = performance.now() - sequentialStart;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuPerSignatureMs = (cpu.user + cpu.system) / 1000 / signatures;

  // 2. All at once (a fresh cache, other tenant: nothing is remembered from step 1).
  const burst = counted(local);
  const concurrent = createOfflineProcessor(
    { store: createFakeStore().store, index: createFakeIndex().index },
    { embedder: createCachedEmbedder(burst.embedder) },
  );
  const burstCpuBefore = process.cpuUsage();
  const burstStart = performance.now();
  await Promise.all(
    Array.from({ length: signatures }, (_, i) => concurrent.process(benchEvent("bound-b", i, i))),
  );
  const burstMs = performance.now() - burstStart;
  const burstCpu = process.cpuUsage(burstCpuBefore);
  const burstCpuPerSignatureMs = (burstCpu.user + burstCpu.system) / 1000 / signatures;

  // The floor: the CPU a new signature costs (the model's threads and the processor's own work,
  // the cheaper of the two runs), spread over every core of the machine with nothing else
  // running. Wall times depend on the load; this does not, and no scheduling can beat it.
  const cores = cpus().length;
  const perSignatureMs = Math.min(cpuPerSignatureMs, burstCpuPerSignatureMs) / cores;
  // Latency benchmark: 1,500 events at 100/s, signature i % 75, so 75 new signatures arrive in
  // its first 0.75 s and are 5 % of the events; its p99 is the 15th slowest event. The 15 new
  // signatures finished last finish no earlier than (75 − 15 + 1) signatures' model time after
  // the start, and arrived by 0.75 s: that is a floor under the p99, whatever else is fast.
  const latencyEvents = 1500;
  const newInLatency = 75;
  const slowest = Math.ceil(latencyEvents / 100);
  const p99FloorMs = (newInLatency - slowest + 1) * perSignatureMs - 750;
  const pipeP99Ms = Number(process.env.BENCH_PIPE_P99_MS ?? 21);
  // e2e benchmark: 5,000 events, 250 new signatures: the model alone needs 250 signatures' time.
  const e2eEvents = 5000;
  const e2eCeiling = e2eEvents / ((e2eEvents / 20) * (perSignatureMs / 1000));
  const pipeRate = Number(process.env.BENCH_PIPE_RATE ?? 25_000);

  const lines = [
    `${String(signatures)} new signatures, heuristic generator, in-memory store and index, the local model (${local.name}) on its worker thread`,
    `one at a time: wall ${(sequentialMs / signatures).toFixed(1)} ms per signature (waiting for the model ${(one.stats.ms / signatures).toFixed(1)} ms of it), ${(one.stats.texts / signatures).toFixed(2)} texts in ${(one.stats.calls / signatures).toFixed(2)} calls; CPU ${cpuPerSignatureMs.toFixed(1)} ms per signature`,
    `all at once:   wall ${burstMs.toFixed(0)} ms for ${String(signatures)} (${(burstMs / signatures).toFixed(1)} ms per signature), ${(burst.stats.texts / signatures).toFixed(2)} texts per signature; CPU ${burstCpuPerSignatureMs.toFixed(1)} ms per signature`,
    `floor per new signature: ${Math.min(cpuPerSignatureMs, burstCpuPerSignatureMs).toFixed(1)} ms of CPU ÷ ${String(cores)} cores = ${perSignatureMs.toFixed(1)} ms (nothing else running, every core busy with it)`,
    `latency floor: 1,500 events at 100/s with 75 new signatures in the first 0.75 s → p99 ≥ ${String(newInLatency - slowest + 1)} × ${perSignatureMs.toFixed(1)} ms − 750 ms = ${p99FloorMs.toFixed(0)} ms; goal 5 × the pipe's p99 = ${String(5 * pipeP99Ms)} ms (pipe p99 ${String(pipeP99Ms)} ms, BENCH_PIPE_P99_MS)`,
    `e2e ceiling:   5,000 events with 250 new signatures → ≤ ${e2eCeiling.toFixed(0)} events/s from the model alone; goal 0.25 × the pipe = ${String(0.25 * pipeRate)} events/s (pipe ${String(pipeRate)}, BENCH_PIPE_RATE)`,
  ];
  return {
    name: "the local model's bound on latency and e2e (default embedder)",
    lines,
    // How far the model's floor alone is above the latency goal: > 1 means the goal is out of reach.
    ratio: p99FloorMs / (5 * pipeP99Ms),
    goal: "report: > 1 means the latency goal is out of reach with the local model",
    met: p99FloorMs <= 5 * pipeP99Ms,
  };
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchModelBound());
  process.exit(0);
}
