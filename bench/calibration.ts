/**
 * How the judge's verdicts and memory's storage decisions agree with a reviewer's labels, on the
 * labelled calibration set in `test/calibration/` (reflections on realistic multi-agent and
 * single-agent failures: good, vague, off-topic, incomplete, duplicate). Default settings and the
 * default embedder. Memory holds the good lessons judged before each case, as a tenant's store
 * would; the pattern evidence is the case's own episode only (a young tenant). Prints the share of
 * good reflections not rejected (and stored), and of bad ones rejected or not stored, per label,
 * plus the similarities the relevance scale and the merge threshold rest on.
 */
import { buildLlm } from "../src/composition/builders.js";
import { loadConfig } from "../src/config/config.js";
import { cosineSimilarity } from "../src/domain/embedding/hashing-embedding.js";
import { decideStorage, type StorageDecision } from "../src/domain/memory/decide-storage.js";
import { failingStepOf } from "../src/domain/memory/failing-step.js";
import { episodeText, taskText } from "../src/domain/memory/trace-text.js";
import { withEpisode } from "../src/domain/quality/pattern-validity.js";
import { traceFacts } from "../src/domain/quality/trace-facts.js";
import { defaultQualityConfig } from "../src/domain/quality/quality-config.js";
import { decideVerdict } from "../src/domain/quality/validate-reflection.js";
import { judgeReflection, reflectionBody, type Neighbour } from "../src/pipeline/judge-reflection.js";
import { calibrationSet, type CalibrationLabel } from "../test/calibration/reflection-calibration.js";
import { report, withDeadline, type BenchResult } from "./support.js";

interface Row {
  label: CalibrationLabel;
  qualityScore: number;
  verdict: string;
  storage: StorageDecision["action"];
  relevanceRaw: number;
  /** Not stored only because of the storage bar. */
  notStoredForQuality: boolean;
  nearest: number;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
const pct = (part: number, whole: number) =>
  `${String(part)}/${String(whole)} = ${((100 * part) / whole).toFixed(0)} %`;

export async function benchCalibration(): Promise<BenchResult> {
  return withDeadline("calibration", 300_000, run);
}

async function run(): Promise<BenchResult> {
  // Default settings, unless REFLECTOR_EMBEDDINGS or MEMORY_* are given to measure others.
  const measured = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k === "REFLECTOR_EMBEDDINGS" || k.startsWith("MEMORY_")),
  );
  const config = loadConfig(measured);
  const { embedder } = buildLlm(config);
  const quality = { ...defaultQualityConfig, storageMinQuality: config.quality.storageMinQuality };
  const cases = calibrationSet();
  const memory: (Neighbour & { id: string; qualityScore: number })[] = [];
  const rows: Row[] = [];
  for (const c of cases) {
    const step = failingStepOf(c.event);
    const [taskVector, analysisVector] = await embedder.embed([
      taskText(c.event, step),
      c.reflection.reflectionText,
    ]);
    if (!taskVector || !analysisVector) throw new Error("embedder returned no vector");
    const judgement = await judgeReflection(
      {
        reflection: c.reflection,
        trace: traceFacts(c.event),
        taskVector,
        neighbours: memory,
        patternEvidence: withEpisode(new Map(), c.reflection.patterns, episodeText(c.event, step)),
        sameLessonSimilarity: config.memory.mergeMinSimilarity,
      },
      embedder,
      quality,
    );
    const verdict = decideVerdict(judgement.validation, quality);
    const nearestId = judgement.nearest?.id;
    const storage = decideStorage(
      {
        verdict,
        qualityScore: judgement.validation.qualityScore,
        metrics: judgement.validation.metrics,
        missingFields: judgement.validation.missingFields,
        finding: null,
        nearest:
          judgement.nearest && nearestId
            ? {
                id: nearestId,
                similarity: judgement.nearest.similarity,
                qualityScore: memory.find((m) => m.id === nearestId)?.qualityScore ?? 1,
              }
            : null,
      },
      quality,
      config.memory,
    );
    // Memory keeps what a tenant's store would: lessons stored as new.
    if (storage.action === "add")
      memory.push({
        id: c.id,
        embedding: judgement.embedding,
        qualityScore: judgement.validation.qualityScore,
      });
    rows.push({
      label: c.label,
      qualityScore: judgement.validation.qualityScore,
      verdict,
      storage: storage.action,
      notStoredForQuality: storage.action === "none" && storage.reason.startsWith("quality"),
      relevanceRaw: cosineSimilarity(analysisVector, taskVector),
      nearest: judgement.nearest?.similarity ?? 0,
    });
  }
  // Lesson similarity of each duplicate to the good lesson it repeats, and of good lessons of
  // different causes to each other: what the merge threshold separates.
  const byId = new Map(cases.map((c) => [c.id, c]));
  const bodies = await embedder.embed(cases.map((c) => reflectionBody(c.reflection)));
  const vectorOf = new Map(cases.map((c, i) => [c.id, bodies[i] ?? []]));
  const duplicatePairs = cases
    .filter((c) => c.label === "duplicate" && c.duplicateOf && byId.has(c.duplicateOf))
    .map((c) => cosineSimilarity(vectorOf.get(c.id) ?? [], vectorOf.get(c.duplicateOf ?? "") ?? []));
  const goods = cases.filter((c) => c.label === "good");
  const goodPairs: number[] = [];
  for (let i = 0; i < goods.length; i += 1)
    for (let j = 0; j < i; j += 1)
      goodPairs.push(
        cosineSimilarity(vectorOf.get(goods[i]?.id ?? "") ?? [], vectorOf.get(goods[j]?.id ?? "") ?? []),
      );

  const lines: string[] = [
    `embedder ${embedder.name}; ${String(cases.length)} labelled reflections; storage bar ${String(quality.storageMinQuality)}, merge at ${config.memory.mergeMinSimilarity.toFixed(2)}`,
    "| label | n | accepted | with warnings | rejected | stored new | merged | not stored | relevance (raw cos, mean) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  const labels: CalibrationLabel[] = ["good", "vague", "off_topic", "incomplete", "duplicate"];
  for (const label of labels) {
    const of = rows.filter((r) => r.label === label);
    const count = (p: (r: Row) => boolean) => String(of.filter(p).length);
    lines.push(
      `| ${label} | ${String(of.length)} | ${count((r) => r.verdict === "accepted")} | ${count((r) => r.verdict === "accepted_with_warnings")} | ${count((r) => r.verdict === "rejected")} | ${count((r) => r.storage === "add")} | ${count((r) => r.storage === "update" || r.storage === "noop")} | ${count((r) => r.storage === "none")} | ${mean(of.map((r) => r.relevanceRaw)).toFixed(2)} |`,
    );
  }
  const good = rows.filter((r) => r.label === "good");
  const bad = rows.filter((r) => r.label !== "good");
  const goodKept = good.filter((r) => r.verdict !== "rejected").length;
  const goodStored = good.filter((r) => r.storage === "add").length;
  // A duplicate merged into its lesson is not stored again; a bad one merged into a good one
  // would be counted as caught only if it is a duplicate.
  const caught = bad.filter(
    (r) =>
      r.verdict === "rejected" ||
      r.storage === "none" ||
      (r.label === "duplicate" && (r.storage === "update" || r.storage === "noop")),
  ).length;
  lines.push(
    `good not rejected: ${pct(goodKept, good.length)} (stored as new lessons ${pct(goodStored, good.length)})`,
    `bad rejected or not stored: ${pct(caught, bad.length)}`,
    `lesson similarity, duplicate ↔ its original: min ${Math.min(...duplicatePairs).toFixed(2)}, mean ${mean(duplicatePairs).toFixed(2)}; good ↔ good of another cause: mean ${mean(goodPairs).toFixed(2)}, max ${Math.max(...goodPairs).toFixed(2)}`,
  );
  // The storage bar is 0.8 by default; what a lower one would keep, for operators who tune it.
  for (const bar of [0.75, 0.7]) {
    const wouldStore = (r: Row) =>
      r.storage === "add" || (r.storage === "none" && r.notStoredForQuality && r.qualityScore >= bar);
    lines.push(
      `with STORAGE_MIN_QUALITY=${String(bar)}: good stored ${pct(good.filter(wouldStore).length, good.length)}, bad stored ${pct(bad.filter(wouldStore).length, bad.length)}`,
    );
  }
  const ratio = Math.min(goodKept / good.length, caught / bad.length);
  return {
    name: "Judge and memory against labelled reflections (calibration set)",
    lines,
    ratio,
    goal: "≥ 0.90 of good not rejected and ≥ 0.90 of bad rejected or not stored",
    met: goodKept / good.length >= 0.9 && caught / bad.length >= 0.9,
  };
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) {
  report(await benchCalibration());
  process.exit(0);
}
