/**
 * A second stage for lessons for a task that needs no remote call: a logistic classifier over
 * features of each (task, lesson) pair that the first stage already computes — the cosine of the
 * task with the lesson's trace by each embedder, the rare words the two tasks share (their nats,
 * the rarest one's, how many), the lesson's rank and margin among the tenant's lessons — trained
 * on the first labels' tune split alone and read on what nothing was fitted on (the first labels'
 * held-out split and the sets labelled after the rules were fixed: fresh to fresh-4), beside the
 * code's rule (relevance floor and shared-words bar) on the same queries. A lesson is served when
 * the classifier's probability reaches a threshold, chosen on the tune split like the code's floor.
 *
 * Leave-one-set-out too: for each label set, trained on every other set and read on it, so that
 * every label is read once by a classifier that did not see it (the same-domain unrelated requests
 * apart, where the first stage fails).
 *
 * `REFLECTOR_REAL_LOGS_DIR=<logs> npx tsx bench/lessons-for-task-second-stage.ts [EMBEDDER...]`
 * (default `static` and, when its files are there, `all-minilm-l6-v2`; names as in
 * bench/lessons-for-task-models.ts). A measurement, not a setting: nothing in the service reads it.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createCachedEmbedder } from "../src/adapters/embedding/cached-embedder.js";
import { createLocalEmbedder } from "../src/adapters/embedding/local-embedder.js";
import { buildLlm } from "../src/composition/builders.js";
import { loadConfig } from "../src/config/config.js";
import { modelProfile } from "../src/domain/embedding/model-profiles.js";
import { taskQueryText, unitVector } from "../src/features/lessons/lessons-for-task-rank.js";
import { sharedWordsMinNats, WordRarity, wordsOf } from "../src/features/lessons/task-words.js";
import type { Embedder } from "../src/pipeline/ports.js";
import { answers, benchLessonsAndQueries, scoreAt, tuneFloor, type Query } from "./lessons-for-task.js";
import { realLogsDir } from "./real-logs/real-logs.js";
import { withDeadline } from "./support.js";

const modelsDir = resolve(
  process.env.REFLECTOR_MODELS_DIR ?? fileURLToPath(new URL("../.services/models", import.meta.url)),
);
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

function embedderOf(name: string): Embedder {
  if (name === "static") return buildLlm(loadConfig({})).embedder;
  if (name !== "all-minilm-l6-v2") throw new Error(`unknown embedder ${name}`);
  return createLocalEmbedder({ modelDir: join(modelsDir, name), profile: modelProfile(name) });
}

/** One (task, lesson) pair: its features and whether the lesson is right for the task. */
interface Pair {
  query: number;
  lesson: string;
  features: number[];
  right: boolean;
}

const dot = (a: Float32Array, b: Float32Array) => {
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
};

/** The pairs of every query with every lesson, with the features of each embedder named. */
async function pairsOf(dir: string, names: string[]) {
  const embedders = names.map((n) => createCachedEmbedder(embedderOf(n), 100_000));
  const first = embedders[0];
  if (!first) throw new Error("no embedder");
  const { lessons, queries, note } = await benchLessonsAndQueries(dir, first);
  // Every embedder's trace vector of each lesson (the first one's is the lesson's own).
  const lessonVectors: Float32Array[][] = [lessons.map((l) => l.vector)];
  for (const embedder of embedders.slice(1)) {
    const other = await benchLessonsAndQueries(dir, embedder);
    lessonVectors.push(
      lessons.map((l) => other.lessons.find((o) => o.key === l.key)?.vector ?? new Float32Array()),
    );
  }
  const texts = queries.map((q) => taskQueryText({ task: q.text }));
  const queryVectors = await Promise.all(
    embedders.map(async (e) =>
      (await e.embed(texts, undefined, "query")).map((v) => unitVector(v) ?? new Float32Array()),
    ),
  );
  const rarity = new WordRarity();
  for (const lesson of lessons) rarity.add(lesson.taskWords ?? []);
  const pairs: Pair[] = [];
  queries.forEach((q, qi) => {
    const words = new Set(wordsOf(texts[qi] ?? ""));
    const cosines = embedders.map((_, e) =>
      lessons.map((_l, li) =>
        dot(queryVectors[e]?.[qi] ?? new Float32Array(), lessonVectors[e]?.[li] ?? new Float32Array()),
      ),
    );
    lessons.forEach((lesson, li) => {
      const shared = (lesson.taskWords ?? []).filter((w) => words.has(w));
      const perWord = shared.map((w) => rarity.shared(new Set([w]), [w]));
      const features: number[] = [];
      for (const byLesson of cosines) {
        const own = byLesson[li] ?? 0;
        const sorted = [...byLesson].sort((a, b) => b - a);
        features.push(own, own - (sorted[0] ?? 0), own - (sorted[1] ?? 0), sorted.indexOf(own));
      }
      features.push(
        rarity.shared(words, lesson.taskWords ?? []),
        Math.max(0, ...perWord),
        shared.length,
        shared.length / Math.max(1, words.size),
      );
      pairs.push({ query: qi, lesson: lesson.key, features, right: q.right.includes(lesson.key) });
    });
  });
  return { pairs, queries, lessons, note, embedders };
}

/** L2-regularised logistic regression by gradient descent on standardised features. */
function train(rows: Pair[]) {
  const width = rows[0]?.features.length ?? 0;
  const mean = Array.from(
    { length: width },
    (_, j) => rows.reduce((s, r) => s + (r.features[j] ?? 0), 0) / rows.length,
  );
  const sd = Array.from(
    { length: width },
    (_, j) =>
      Math.sqrt(rows.reduce((s, r) => s + ((r.features[j] ?? 0) - (mean[j] ?? 0)) ** 2, 0) / rows.length) ||
      1,
  );
  const x = rows.map((r) => r.features.map((v, j) => (v - (mean[j] ?? 0)) / (sd[j] ?? 1)));
  const w = new Array<number>(width + 1).fill(0);
  // Right pairs are one in twelve: weigh them up so the classifier does not learn "never".
  const positives = rows.filter((r) => r.right).length;
  const up = positives ? (rows.length - positives) / positives : 1;
  for (let epoch = 0; epoch < 2_000; epoch += 1) {
    const grad = new Array<number>(width + 1).fill(0);
    rows.forEach((r, i) => {
      const xi = x[i] ?? [];
      const z = (w[width] ?? 0) + xi.reduce((s, v, j) => s + v * (w[j] ?? 0), 0);
      const p = 1 / (1 + Math.exp(-z));
      const err = (p - (r.right ? 1 : 0)) * (r.right ? up : 1);
      xi.forEach((v, j) => (grad[j] = (grad[j] ?? 0) + err * v));
      grad[width] = (grad[width] ?? 0) + err;
    });
    for (let j = 0; j <= width; j += 1)
      w[j] = (w[j] ?? 0) - (0.1 * ((grad[j] ?? 0) + (j < width ? 0.01 * (w[j] ?? 0) : 0))) / rows.length;
  }
  return (features: number[]) => {
    const z =
      (w[width] ?? 0) +
      features.reduce((s, v, j) => s + ((v - (mean[j] ?? 0)) / (sd[j] ?? 1)) * (w[j] ?? 0), 0);
    return 1 / (1 + Math.exp(-z));
  };
}

/** Each query's lessons as the classifier ranks them (probability as the relevance), best first, top 3. */
function classified(pairs: Pair[], queries: Query[], predict: (f: number[]) => number) {
  return queries.map((_, qi) =>
    pairs
      .filter((p) => p.query === qi)
      .map((p) => ({ key: p.lesson, relevance: predict(p.features) }))
      .sort((a, b) => b.relevance - a.relevance)
      .slice(0, 3),
  );
}

type Keep = (q: Query) => boolean;
function scoreOn(
  threshold: number,
  queries: Query[],
  got: { key: string; relevance: number }[][],
  keep: Keep,
) {
  const kept = queries.map((q, i) => ({ q, a: got[i] ?? [] })).filter((x) => keep(x.q));
  const s = scoreAt(
    threshold,
    kept.map((x) => x.q),
    kept.map((x) => x.a),
  );
  const same = kept.filter((x) => x.q.kind === "unrelated-same-domain");
  const sd = scoreAt(
    threshold,
    same.map((x) => x.q),
    same.map((x) => x.a),
  );
  return `${pct(s.hit)} of ${String(s.related)} / ${pct(s.clean)} of ${String(s.unrelated)} (same domain ${pct(sd.clean)} of ${String(sd.unrelated)}), min ${pct(Math.min(s.hit, s.clean))}`;
}

const parts: [string, Keep][] = [
  ["first, held out", (q) => q.set === "first" && q.split === "holdout"],
  ["fresh…fresh-4 (blind)", (q) => q.set !== "first"],
];

async function measure(dir: string, names: string[]): Promise<string[]> {
  const { pairs, queries, lessons, note, embedders } = await pairsOf(dir, names);
  const lines = note ? [note] : [];
  const label = names.join(" + ");
  lines.push(`${label}: ${String(queries.length)} queries × ${String(lessons.length)} lessons`);
  // The code's rule on the same queries: the floor fitted on the tune split at the code's bar.
  const first = embedders[0];
  if (first) {
    const code = await answers(queries, lessons, first, sharedWordsMinNats);
    const floor = tuneFloor(queries, code).floor;
    lines.push(
      `  the code's rule (${names[0] ?? ""}, bar ${sharedWordsMinNats.toFixed(3)} nats, floor ${floor.toFixed(2)}): ${parts.map(([n, k]) => `${n} ${scoreOn(floor, queries, code, k)}`).join("; ")}`,
    );
  }
  // Trained on the first labels' tune split; the threshold chosen there too.
  const isTune = (q: Query) => q.set === "first" && q.split === "tune";
  const predict = train(pairs.filter((p) => isTune(queries[p.query] ?? ({} as Query))));
  const got = classified(pairs, queries, predict);
  const threshold = tuneFloor(queries, got).floor;
  lines.push(
    `  classifier, trained and thresholded (${threshold.toFixed(2)}) on the tune split: ${parts.map(([n, k]) => `${n} ${scoreOn(threshold, queries, got, k)}`).join("; ")}`,
  );
  // Leave one label set out: every label read by a classifier that did not see its set.
  const sets = [...new Set(queries.map((q) => q.set))];
  const pooled: { key: string; relevance: number }[][] = queries.map(() => []);
  const lines2: string[] = [];
  for (const held of sets) {
    const trainOn = pairs.filter((p) => queries[p.query]?.set !== held);
    const model = train(trainOn);
    const onTrain = classified(pairs, queries, model);
    // Threshold chosen on the training sets only.
    const others = queries.map((q) =>
      q.set === held
        ? { ...q, split: "holdout" as const }
        : { ...q, split: "tune" as const, set: "first" as const },
    );
    const t = tuneFloor(others, onTrain).floor;
    queries.forEach((q, i) => {
      if (q.set === held)
        pooled[i] = (onTrain[i] ?? []).map((a) => ({ ...a, relevance: a.relevance >= t ? 1 : 0 }));
    });
    lines2.push(`${held} ${scoreOn(t, queries, onTrain, (q) => q.set === held)} (threshold ${t.toFixed(2)})`);
  }
  lines.push(`  leave one set out: ${lines2.join("; ")}`);
  lines.push(`  leave one set out, every label once: ${scoreOn(1, queries, pooled, () => true)}`);
  if (first) {
    const code = await answers(queries, lessons, first, sharedWordsMinNats);
    lines.push(
      `  the code's rule on every label, for comparison: ${scoreOn(tuneFloor(queries, code).floor, queries, code, () => true)}`,
    );
  }
  return lines;
}

const logs = realLogsDir();
if ("absent" in logs) {
  console.log(`not measured: ${logs.absent}`);
} else {
  const asked = process.argv.slice(2);
  const names =
    asked.length > 0
      ? asked
      : ["static", ...(existsSync(join(modelsDir, "all-minilm-l6-v2")) ? ["all-minilm-l6-v2"] : [])];
  console.log(new Date().toISOString());
  const runs = names.length > 1 ? [[names[0] ?? "static"], names] : [names];
  for (const run of runs)
    for (const line of await withDeadline("second stage", 900_000, () => measure(logs.dir, run)))
      console.log(line);
}
