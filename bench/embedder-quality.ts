/**
 * Each embedder on real agent failure logs (bench/real-logs/): what its vectors cost and how much
 * of the local model's meaning they keep. Needs REFLECTOR_REAL_LOGS_DIR and the local model with
 * its distilled table (`npm run models`); not Kafka.
 *
 * - neighbours: for every real trace text, whether its nearest other trace is the one the local
 *   model (256 tokens, the reference) finds, and the correlation of all pairwise cosines with the
 *   reference's;
 * - recurrence: τ-bench runs every task four times; a failed trial's nearest failed trial should be
 *   one of the same task (by its failing step and error only: the task text alone would give it away);
 * - reasons: Who&When's annotators wrote why each run failed; that line should be closer to its
 *   own trace than to the others (top-1 and the share of other traces ranked below its own);
 * - CPU per text, all threads of the process, after a warm-up.
 */
import { cpuUsage } from "node:process";
import { createHashingEmbedder } from "../src/adapters/embedding/hashing-embedder.js";
import { createLocalEmbedder } from "../src/adapters/embedding/local-embedder.js";
import { createStaticEmbedder } from "../src/adapters/embedding/static-embedder.js";
import { defaultEmbeddingModelDir } from "../src/config/llm-settings.js";
import { failingStepOf } from "../src/domain/memory/failing-step.js";
import { stepLine, traceText } from "../src/domain/memory/trace-text.js";
import { maskVolatileTokens } from "../src/domain/mask-volatile-tokens.js";
import type { Embedder } from "../src/pipeline/ports.js";
import { taskText } from "../src/domain/memory/trace-text.js";
import { calibrationSet } from "../test/calibration/reflection-calibration.js";
import { loadRealFailures, realLogsDir, type RealFailure } from "./real-logs/real-logs.js";
import type { BenchResult } from "./support.js";

const modelDir = process.env.REFLECTOR_EMBEDDING_MODEL_DIR ?? defaultEmbeddingModelDir;

function dot(a: readonly number[], b: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

/** Index of the nearest of `vectors` to `vectors[i]`, itself left out. */
export function nearest(vectors: number[][], i: number, among?: (j: number) => boolean): number {
  let best = -1;
  let bestSim = -Infinity;
  const v = vectors[i] ?? [];
  vectors.forEach((w, j) => {
    if (j === i || (among && !among(j))) return;
    const sim = dot(v, w);
    if (sim > bestSim) {
      bestSim = sim;
      best = j;
    }
  });
  return best;
}

export function pearson(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((s, x) => s + x, 0) / n;
  const my = ys.reduce((s, y) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i += 1) {
    const dx = (xs[i] ?? 0) - mx;
    const dy = (ys[i] ?? 0) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxy / Math.sqrt(sxx * syy);
}

export function pairwise(vectors: number[][]): number[] {
  const sims: number[] = [];
  for (let i = 0; i < vectors.length; i += 1)
    for (let j = i + 1; j < vectors.length; j += 1) sims.push(dot(vectors[i] ?? [], vectors[j] ?? []));
  return sims;
}

export interface Texts {
  traces: string[];
  tauFailing: string[];
  tauTasks: string[];
  reasons: string[];
  /** Index into `traces` of each reason's own trace. */
  reasonTrace: number[];
}

export function textsOf(failures: RealFailure[]): Texts {
  const traces = failures.map((f) => traceText(f.event, failingStepOf(f.event)));
  const tau = failures.filter((f) => f.source === "tau-bench/airline");
  const tauFailing = tau.map((f) => {
    const step = failingStepOf(f.event);
    return maskVolatileTokens([step ? stepLine(step, 500) : "", f.event.error?.message ?? ""].join("\n"));
  });
  const reasons: string[] = [];
  const reasonTrace: number[] = [];
  failures.forEach((f, i) => {
    if (f.source !== "tau-bench/airline" && f.label.reason.trim().length > 0) {
      reasons.push(f.label.reason);
      reasonTrace.push(i);
    }
  });
  return { traces, tauFailing, tauTasks: tau.map((f) => f.taskKey), reasons, reasonTrace };
}

export interface Scores {
  cpuMsPerText: number;
  traces: number[][];
  recurrence: number;
  recurrenceCases: number;
  reasonTop1: number;
  reasonAuc: number;
}

export async function score(embedder: Embedder, texts: Texts): Promise<Scores> {
  await embedder.embed(texts.traces.slice(0, 8));
  const all = [...texts.traces, ...texts.tauFailing, ...texts.reasons];
  const before = cpuUsage();
  const vectors = await embedder.embed(all);
  const used = cpuUsage(before);
  const traces = vectors.slice(0, texts.traces.length);
  const tau = vectors.slice(texts.traces.length, texts.traces.length + texts.tauFailing.length);
  const reasons = vectors.slice(texts.traces.length + texts.tauFailing.length);

  let hits = 0;
  let cases = 0;
  tau.forEach((_, i) => {
    const task = texts.tauTasks[i];
    if (!texts.tauTasks.some((t, j) => j !== i && t === task)) return;
    cases += 1;
    if (texts.tauTasks[nearest(tau, i)] === task) hits += 1;
  });

  let top1 = 0;
  let auc = 0;
  // Who&When traces only: a reason is compared with the traces of its own kind of log.
  const candidates = [...new Set(texts.reasonTrace)];
  reasons.forEach((r, k) => {
    const own = texts.reasonTrace[k] ?? -1;
    const ownSim = dot(r, traces[own] ?? []);
    let below = 0;
    let best = true;
    for (const j of candidates) {
      if (j === own) continue;
      const sim = dot(r, traces[j] ?? []);
      if (sim < ownSim) below += 1;
      else best = false;
    }
    if (best) top1 += 1;
    auc += below / (candidates.length - 1);
  });
  return {
    cpuMsPerText: (used.user + used.system) / 1000 / all.length,
    traces,
    recurrence: hits / cases,
    recurrenceCases: cases,
    reasonTop1: top1 / reasons.length,
    reasonAuc: auc / reasons.length,
  };
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

/**
 * What an embedder's `similarityScale` is measured from: on the labelled calibration set, the
 * cosine of a good analysis with its own task (median and 10th percentile) and with the other
 * cases' tasks (median).
 */
export async function similarityScaleOf(
  embedder: Embedder,
): Promise<{ own: number; ownP10: number; other: number }> {
  const good = calibrationSet().filter((c) => c.label === "good");
  const tasks = await embedder.embed(good.map((c) => taskText(c.event, failingStepOf(c.event))));
  const analyses = await embedder.embed(good.map((c) => c.reflection.reflectionText));
  const own: number[] = [];
  const other: number[] = [];
  analyses.forEach((a, i) => {
    tasks.forEach((t, j) => {
      (i === j ? own : other).push(dot(a, t));
    });
  });
  return { own: quantile(own, 0.5), ownP10: quantile(own, 0.1), other: quantile(other, 0.5) };
}

export async function benchEmbedderQuality(): Promise<BenchResult> {
  const logs = realLogsDir();
  if ("absent" in logs) throw new Error(logs.absent);
  const failures = loadRealFailures(logs.dir);
  const texts = textsOf(failures);
  const embedders: Embedder[] = [
    createLocalEmbedder({ modelDir }),
    { ...createLocalEmbedder({ modelDir, maxTokens: 128 }), name: `local:128-tokens` },
    createStaticEmbedder({ modelDir }),
    { ...createStaticEmbedder({ modelDir, maxTokens: 512 }), name: "static:512-tokens" },
    createHashingEmbedder(),
  ];
  const results: { name: string; scores: Scores }[] = [];
  const scales: string[] = [];
  for (const embedder of embedders) {
    results.push({ name: embedder.name, scores: await score(embedder, texts) });
    const scale = await similarityScaleOf(embedder);
    scales.push(
      `${embedder.name}: good analysis ~ own task median ${scale.own.toFixed(3)} (p10 ${scale.ownP10.toFixed(3)}), ~ other tasks median ${scale.other.toFixed(3)}; declared ${JSON.stringify(embedder.similarityScale ?? null)}`,
    );
  }
  const reference = results[0]?.scores;
  if (!reference) throw new Error("no reference embedder");
  const refPairs = pairwise(reference.traces);
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
  const lines = [
    `${String(failures.length)} real failures (${String(texts.tauFailing.length)} τ-bench, ${String(texts.reasons.length)} Who&When reasons); reference: ${embedders[0]?.name ?? ""}`,
    "embedder | CPU ms/text | same nearest trace as reference | pairwise-cosine correlation | τ-bench recurrence top-1 | Who&When reason→own trace top-1 | reason AUC",
  ];
  let worstGap = 0;
  for (const { name, scores } of results) {
    let agree = 0;
    scores.traces.forEach((_, i) => {
      if (nearest(scores.traces, i) === nearest(reference.traces, i)) agree += 1;
    });
    const correlation = pearson(pairwise(scores.traces), refPairs);
    lines.push(
      `${name} | ${scores.cpuMsPerText.toFixed(3)} | ${pct(agree / scores.traces.length)} | ${correlation.toFixed(3)} | ${pct(scores.recurrence)} of ${String(scores.recurrenceCases)} | ${pct(scores.reasonTop1)} | ${pct(scores.reasonAuc)}`,
    );
    if (name.startsWith("static:"))
      worstGap = Math.max(
        worstGap,
        reference.recurrence - scores.recurrence,
        reference.reasonTop1 - scores.reasonTop1,
        reference.reasonAuc - scores.reasonAuc,
      );
  }
  lines.push("similarity scale (calibration set, good analyses):", ...scales.map((l) => `  ${l}`));
  return {
    name: "embedder quality on real logs",
    lines,
    ratio: worstGap * 100,
    goal: "the static embedder within 2 points of the local model on recurrence and reasons",
    met: worstGap * 100 <= 2,
  };
}
