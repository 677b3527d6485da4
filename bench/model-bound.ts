import { cpus } from "node:os";
import { createCachedEmbedder } from "../src/adapters/embedding/cached-embedder.js";
import { createHashingEmbedder } from "../src/adapters/embedding/hashing-embedder.js";
import { createLocalEmbedder } from "../src/adapters/embedding/local-embedder.js";
import { createStaticEmbedder } from "../src/adapters/embedding/static-embedder.js";
import { loadConfig } from "../src/config/config.js";
import type { Embedder } from "../src/pipeline/ports.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../test/support/fakes.js";
import { benchEvent, report, withDeadline, type BenchResult } from "./support.js";

/**
 * The embedder behind a counter: texts it was asked for, calls, the wall time they took and the
 * process's CPU meanwhile (every thread's: the local model's worker too). Run one call at a time,
 * that CPU is the embedder's.
 */
function counted(inner: Embedder) {
  const stats = { calls: 0, texts: 0, ms: 0, cpuMs: 0 };
  const embedder: Embedder = {
    ...inner,
    async embed(texts) {
      const start = performance.now();
      const cpu = process.cpuUsage();
      try {
        return await inner.embed(texts);
      } finally {
        const used = process.cpuUsage(cpu);
        stats.calls += 1;
        stats.texts += texts.length;
        stats.ms += performance.now() - start;
        stats.cpuMs += (used.user + used.system) / 1000;
      }
    },
  };
  return { embedder, stats };
}

/**
 * What the default embedder (REFLECTOR_EMBEDDINGS picks another) costs per new signature, and the bounds that
 * follow for the e2e and latency benchmarks, which run the same events (`benchEvent`) through the
 * same processor. Only the embedder is real here: the store and index are in memory, so every
 * millisecond measured is the embedder's (or the processor's CPU beside it).
 *
 * A new signature's texts: its trace (for matching), its task (relevance) and, per judged
 * attempt, the reflection body (novelty) and its analysis (relevance). They are four different
 * texts, each needed by the verdict; recurring failures hit the embedder's cache.
 *
 * 1. one new signature at a time: texts sent to the embedder, its time and CPU per signature;
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
  const config = loadConfig(
    Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("REFLECTOR_EMBEDDING"))),
  );
  // The embedder the processor is built with (builders.ts), without its cache: each run below caches anew.
  const modelDir = config.embeddingModelDir;
  const local =
    config.embeddings === "local"
      ? createLocalEmbedder({ modelDir })
      : config.embeddings === "static"
        ? createStaticEmbedder({ modelDir })
        : createHashingEmbedder();
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
    `${String(signatures)} new signatures, heuristic generator, in-memory store and index, embedder ${local.name}`,
    `one at a time: wall ${(sequentialMs / signatures).toFixed(1)} ms per signature (waiting for the embedder ${(one.stats.ms / signatures).toFixed(1)} ms of it), ${(one.stats.texts / signatures).toFixed(2)} texts in ${(one.stats.calls / signatures).toFixed(2)} calls; CPU ${cpuPerSignatureMs.toFixed(1)} ms per signature, of which embedding ${(one.stats.cpuMs / signatures).toFixed(2)} ms`,
    `all at once:   wall ${burstMs.toFixed(0)} ms for ${String(signatures)} (${(burstMs / signatures).toFixed(1)} ms per signature), ${(burst.stats.texts / signatures).toFixed(2)} texts per signature; CPU ${burstCpuPerSignatureMs.toFixed(1)} ms per signature`,
    `floor per new signature: ${Math.min(cpuPerSignatureMs, burstCpuPerSignatureMs).toFixed(1)} ms of CPU ÷ ${String(cores)} cores = ${perSignatureMs.toFixed(1)} ms (nothing else running, every core busy with it)`,
    `latency floor: 1,500 events at 100/s with 75 new signatures in the first 0.75 s → p99 ≥ ${String(newInLatency - slowest + 1)} × ${perSignatureMs.toFixed(1)} ms − 750 ms = ${p99FloorMs.toFixed(0)} ms; goal 10 × the pipe's p99 = ${String(10 * pipeP99Ms)} ms (pipe p99 ${String(pipeP99Ms)} ms, BENCH_PIPE_P99_MS)`,
    `e2e ceiling:   5,000 events with 250 new signatures → ≤ ${e2eCeiling.toFixed(0)} events/s from the embedder alone; goal 0.1 × the pipe = ${String(0.1 * pipeRate)} events/s (pipe ${String(pipeRate)}, BENCH_PIPE_RATE)`,
  ];
  return {
    name: `the embedder's bound on latency and e2e (${local.name})`,
    lines,
    // How far the model's floor alone is above the latency goal: > 1 means the goal is out of reach.
    ratio: p99FloorMs / (10 * pipeP99Ms),
    goal: "report: > 1 means the latency goal is out of reach with this embedder",
    met: p99FloorMs <= 10 * pipeP99Ms,
  };
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchModelBound());
  process.exit(0);
}
