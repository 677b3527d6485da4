/**
 * Every local embedding model that can be had, side by side on the lessons-for-a-task labels
 * (bench/lessons-for-task.ts: the same lessons, stored as the pipeline stores them, and the same
 * labelled queries), each with its own conventions (src/domain/embedding/model-profiles.ts: a
 * task is embedded as a query, a stored lesson and its trace as passages).
 *
 * Per model: the floor fitted on the first labels' tune split (as the code's default was) and
 * read on the labels nothing was fitted on (the first labels' held-out split, and the sets
 * labelled after the rules were fixed: fresh, fresh-2, fresh-3, fresh-4), by meaning alone and
 * with the code's shared-words bar; the ceiling (bar and floor chosen on every label, an upper
 * bound, not a choice); and the cost of embedding one task alone, as the API does: p50/p99 and
 * the process's CPU per embed (the worker thread included).
 *
 * `npx tsx bench/lessons-for-task-models.ts [NAME...]` (default: every profile whose files are
 * there, and the static table; REFLECTOR_REAL_LOGS_DIR for the logs; REFLECTOR_MODELS_DIR for a
 * folder of models other than .services/models). `e5-small-v2-q:symmetric` reads stored text
 * behind "query: " too, the convention e5's card gives for symmetric tasks, for comparison only;
 * `a+b` puts two embedders' vectors end to end (a cosine is the mean of theirs).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createCachedEmbedder } from "../src/adapters/embedding/cached-embedder.js";
import { createLocalEmbedder, missingModelFiles } from "../src/adapters/embedding/local-embedder.js";
import { isModelName, modelNames, modelProfile } from "../src/domain/embedding/model-profiles.js";
import { buildLlm } from "../src/composition/builders.js";
import { loadConfig } from "../src/config/config.js";
import { taskQueryText } from "../src/features/lessons/lessons-for-task-rank.js";
import { sharedWordsMinNats } from "../src/features/lessons/task-words.js";
import type { Embedder } from "../src/pipeline/ports.js";
import {
  answers,
  benchLessonsAndQueries,
  scoreAt,
  tuneFloor,
  type Answer,
  type Query,
} from "./lessons-for-task.js";
import { realLogsDir } from "./real-logs/real-logs.js";
import { failingStepOf } from "../src/domain/memory/failing-step.js";
import { taskText } from "../src/domain/memory/trace-text.js";
import { calibrationSet } from "../test/calibration/reflection-calibration.js";

const modelsDir = resolve(
  process.env.REFLECTOR_MODELS_DIR ?? fileURLToPath(new URL("../.services/models", import.meta.url)),
);

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** The embedder a name stands for: `static`, a profile's name, or `e5-small-v2-q:symmetric`. */
function embedderOf(name: string): Embedder | string {
  if (name.includes("+")) return combined(name.split("+").map(embedderOf));
  if (name === "static") return buildLlm(loadConfig({})).embedder;
  const [model = "", variant] = name.split(":");
  if (!isModelName(model)) return `unknown model ${model}`;
  const dir = join(modelsDir, model);
  if (missingModelFiles(dir).length > 0)
    return `${dir} lacks ${missingModelFiles(dir).join(" and ")}: bash scripts/services.sh models ${model}`;
  const profile = modelProfile(model);
  const symmetric = variant === "symmetric";
  return createLocalEmbedder({
    modelDir: dir,
    profile: symmetric
      ? { ...profile, prefixes: { query: profile.prefixes.query, passage: profile.prefixes.query } }
      : profile,
  });
}

/**
 * Two embedders at once (`static+all-minilm-l6-v2`): each one's unit vector scaled by 1/√n and
 * put end to end, so a cosine is the mean of theirs, and so is the scale.
 */
function combined(parts: (Embedder | string)[]): Embedder | string {
  const bad = parts.find((p) => typeof p === "string");
  if (bad !== undefined) return bad;
  const es = parts as Embedder[];
  const k = 1 / Math.sqrt(es.length);
  const unit = (v: number[]) => {
    const n = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0)) || 1;
    return v.map((x) => (x / n) * k);
  };
  const mean = (pick: (s: { unrelated: number; related: number }) => number) =>
    es.reduce((sum, e) => sum + pick(e.similarityScale ?? { unrelated: 0, related: 1 }), 0) / es.length;
  return {
    name: es.map((e) => e.name).join("+"),
    similarityScale: { unrelated: mean((s) => s.unrelated), related: mean((s) => s.related) },
    async embed(texts, tenantId, role) {
      const all = await Promise.all(es.map((e) => e.embed(texts, tenantId, role)));
      return texts.map((_, i) => all.flatMap((vectors) => unit(vectors[i] ?? [])));
    },
  };
}

type Part = (q: Query) => boolean;
const parts: [string, Part][] = [
  ["first, held out", (q) => q.set === "first" && q.split === "holdout"],
  ["fresh…fresh-4 (blind)", (q) => q.set !== "first"],
  ["every label", () => true],
];

function scoreOn(floor: number, queries: Query[], got: Answer[], keep: Part) {
  const kept = queries.map((q, i) => ({ q, a: got[i] ?? [] })).filter((x) => keep(x.q));
  const s = scoreAt(
    floor,
    kept.map((x) => x.q),
    kept.map((x) => x.a),
  );
  const sameDomain = kept.filter((x) => x.q.kind === "unrelated-same-domain");
  const same = scoreAt(
    floor,
    sameDomain.map((x) => x.q),
    sameDomain.map((x) => x.a),
  );
  return `${pct(s.hit)} of ${String(s.related)} / ${pct(s.clean)} of ${String(s.unrelated)} (same domain ${pct(same.clean)})`;
}

/** The best min(hit, clean) any floor reaches on every label at each bar (an upper bound). */
function ceiling(queries: Query[], sweeps: { bar: number | null; got: Answer[] }[]) {
  let best = { worst: -1, hit: 0, clean: 0, bar: null as number | null, floor: 0 };
  for (const { bar, got } of sweeps)
    for (let i = 0; i <= 100; i += 1) {
      const s = scoreAt(i / 100, queries, got);
      const worst = Math.min(s.hit, s.clean);
      if (worst > best.worst) best = { worst, hit: s.hit, clean: s.clean, bar, floor: i / 100 };
    }
  return `${pct(best.worst)} (hit ${pct(best.hit)}, clean ${pct(best.clean)}; ${best.bar === null ? "meaning alone" : `bar ${best.bar.toFixed(2)} nats`}, floor ${best.floor.toFixed(2)})`;
}

/** One task alone at a time, as the API embeds it: p50/p99 in ms and the process's CPU per embed. */
async function speed(embedder: Embedder, queries: Query[]) {
  const texts = queries.map((q) => taskQueryText({ task: q.text }));
  // Distinct texts each time (no cache in the way); the first 20 warm the model up.
  for (const text of texts.slice(0, 20)) await embedder.embed([text], undefined, "query");
  const times: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < 300; i += 1) {
    const text = `${texts[i % texts.length] ?? ""} (${String(i)})`;
    const start = performance.now();
    await embedder.embed([text], undefined, "query");
    times.push(performance.now() - start);
  }
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), cpuMs: (used.user + used.system) / 1000 / times.length };
}

/**
 * The cosines a similarity scale is read from, on the labelled calibration set (not the lessons'
 * labels): a good analysis against its own task (related) and against every other case's task
 * (unrelated), median and 10th percentile, as the default model's scale was measured.
 */
async function scale(embedder: Embedder) {
  const good = calibrationSet().filter((c) => c.label === "good");
  const tasks = await embedder.embed(good.map((c) => taskText(c.event, failingStepOf(c.event))));
  const analyses = await embedder.embed(good.map((c) => c.reflection.reflectionText));
  const cos = (a: number[] = [], b: number[] = []) => a.reduce((sum, v, i) => sum + v * (b[i] ?? 0), 0);
  const related: number[] = [];
  const unrelated: number[] = [];
  analyses.forEach((a, i) => {
    tasks.forEach((t, j) => {
      (i === j ? related : unrelated).push(cos(a, t));
    });
  });
  const q = (xs: number[], p: number) =>
    [...xs].sort((x, y) => x - y)[Math.floor(p * (xs.length - 1))] ?? NaN;
  return `similarity on the calibration set (${String(good.length)} good analyses): own task median ${q(related, 0.5).toFixed(2)} (10th percentile ${q(related, 0.1).toFixed(2)}), another task median ${q(unrelated, 0.5).toFixed(2)}; the scale in use ${JSON.stringify(embedder.similarityScale ?? null)}`;
}

async function measure(name: string, dir: string): Promise<string[]> {
  const built = embedderOf(name);
  if (typeof built === "string") return [`${name}: not measured: ${built}`];
  const cached = createCachedEmbedder(built, 100_000);
  const { lessons, queries, note } = await benchLessonsAndQueries(dir, cached);
  const lines = note ? [`${name}: ${note}`] : [];
  const sweeps: { bar: number | null; got: Answer[] }[] = [];
  for (const bar of [null, ...Array.from({ length: 16 }, (_, i) => (i + 1) / 4)])
    sweeps.push({ bar, got: await answers(queries, lessons, cached, bar) });
  for (const [label, bar] of [
    ["meaning alone", null],
    [`code's bar ${sharedWordsMinNats.toFixed(2)} nats`, sharedWordsMinNats],
  ] as const) {
    const got = bar === null ? (sweeps[0]?.got ?? []) : await answers(queries, lessons, cached, bar);
    const fitted = tuneFloor(queries, got);
    lines.push(
      `${name}, ${label}: floor ${fitted.floor.toFixed(2)} fitted on the first labels' tune split (min ${pct(fitted.worst)} there); hit / clean: ${parts
        .map(([part, keep]) => `${part} ${scoreOn(fitted.floor, queries, got, keep)}`)
        .join("; ")}`,
    );
  }
  lines.push(`${name}: ceiling on every label ${ceiling(queries, sweeps)}`);
  lines.push(`${name}: ${await scale(cached)}`);
  const s = await speed(built, queries);
  lines.push(
    `${name}: one task embedded alone, 300 times: p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms, CPU ${s.cpuMs.toFixed(2)} ms per embed`,
  );
  return lines;
}

const logs = realLogsDir();
if ("absent" in logs) {
  console.log(`not measured: ${logs.absent}`);
} else {
  const asked = process.argv.slice(2);
  const names =
    asked.length > 0 ? asked : ["static", ...modelNames.filter((m) => existsSync(join(modelsDir, m)))];
  console.log(`models from ${modelsDir}; ${new Date().toISOString()}`);
  for (const name of names) for (const line of await measure(name, logs.dir)) console.log(line);
}
