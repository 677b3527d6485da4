/**
 * The lesson check by a model (`LESSONS_FOR_TASK_CHECK=model`) on the lessons-for-task benchmark's
 * queries, with a capable model's recorded answers: for each query, the candidates the service
 * would offer (the nearest lessons in meaning), the exact prompt the adapter would send, and the
 * answer recorded for that prompt (test/fixtures/recorded-answers/lesson-check; PROVENANCE.md
 * there says who answered and how). An answer recorded for another prompt is not used.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { lessonCheckMessages, readLessonCheck } from "../src/adapters/llm/lesson-check-prompt.js";
import { attributeFailure } from "../src/domain/attribution/attribute-failure.js";
import type { Reflection } from "../src/domain/contracts/index.js";
import { generateHeuristicReflection } from "../src/domain/heuristic/generate-heuristic-reflection.js";
import { traceText } from "../src/domain/memory/trace-text.js";
import { checkCandidateOf, lessonCheckCandidates } from "../src/features/lessons/lessons-for-task.js";
import {
  rankLessons,
  taskQueryText,
  unitVector,
  type IndexedLesson,
} from "../src/features/lessons/lessons-for-task-rank.js";
import type { Embedder } from "../src/pipeline/ports.js";
import type { RealFailure } from "./real-logs/real-logs.js";

/** The prompts' nonce: fixed, so that a prompt and its recorded answer can be matched by hash. */
export const benchNonce = "bench0lessoncheck";

export interface CheckQuery {
  name: string;
  text: string;
  vector: Float32Array;
}

/** The candidates and the exact messages the service and its adapter would make for a query. */
export function checkPrompt(
  query: CheckQuery,
  lessons: readonly (IndexedLesson & { key: string })[],
  scale: Embedder["similarityScale"],
  now: Date,
) {
  const candidates = rankLessons(
    lessons,
    { vector: query.vector, limit: lessonCheckCandidates, minImportance: 0.5, floor: 0, now },
    scale,
  ).map((r) => ({ key: r.lesson.id, relevance: r.relevance, lesson: r.lesson }));
  const messages = lessonCheckMessages(
    { task: query.text },
    candidates.map(({ lesson }) => checkCandidateOf(lesson)),
    benchNonce,
  );
  const promptSha256 = createHash("sha256").update(JSON.stringify(messages)).digest("hex");
  return { candidates, messages, promptSha256 };
}

/** Where a query's recorded answer is kept. */
export function recordingUrl(name: string): URL {
  return new URL(
    `../test/fixtures/recorded-answers/lesson-check/${name.replace(/\//g, "_")}.json`,
    import.meta.url,
  );
}

export interface RecordedCheck {
  name: string;
  promptSha256: string;
  answeredBy: string;
  recordedAt: string;
  /** The answer's text, as the model would put it in the message content. */
  content: string;
}

/**
 * What the model chose for a query from its recorded answer (keys, best first, at most 3), or why
 * there is none: `unrecorded` (no file), `stale` (recorded for another prompt), `unusable` (an
 * answer the adapter cannot read: the service falls back to meaning alone).
 */
export function recordedChoice(
  query: CheckQuery,
  prompt: ReturnType<typeof checkPrompt>,
): { keys: string[] } | { missing: "unrecorded" | "stale" | "unusable" } {
  // No lesson near the task: the service asks no model, and serves nothing.
  if (prompt.candidates.length === 0) return { keys: [] };
  const url = recordingUrl(query.name);
  if (!existsSync(url)) return { missing: "unrecorded" };
  const recorded = JSON.parse(readFileSync(url, "utf8")) as RecordedCheck;
  if (recorded.promptSha256 !== prompt.promptSha256) return { missing: "stale" };
  const picked = readLessonCheck({ raw: recorded.content, cut: false }, prompt.candidates.length);
  if (picked === null) return { missing: "unusable" };
  return { keys: picked.flatMap((i) => prompt.candidates[i]?.key ?? []).slice(0, 3) };
}

/**
 * How often a right lesson is among the 8 the model is offered, with the benchmark's 12 lessons
 * alone and with the tenant's other lessons mixed in: those the offline generator writes for every
 * other τ-bench airline failure (a lesson of the same kind of task, or of the very task, then
 * competes for the 8 places; being unlabelled, it never counts as right, so the second share is a
 * lower bound).
 */
export async function candidateRecall(
  queries: readonly { name: string; text: string; kind: string; right: string[] }[],
  lessons: readonly (IndexedLesson & { key: string; recording: string })[],
  failures: readonly RealFailure[],
  embedder: Embedder,
  now: Date,
): Promise<string> {
  // The failures the benchmark's lessons were written for already have their lesson.
  const recorded = new Set(lessons.map((l) => l.recording));
  const others = failures.filter((f) => f.source === "tau-bench/airline" && !recorded.has(f.id));
  const written = others.flatMap((f) => {
    const r = generateHeuristicReflection(f.event);
    if (r.adjustments.length === 0 && !r.learning) return [];
    const step = attributeFailure(f.event)?.stepIndex;
    return [{ f, r, text: traceText(f.event, step === undefined ? undefined : f.event.events[step]) }];
  });
  const vectors = await embedder.embed(written.map((w) => w.text));
  const extra = written.map(({ f, r }, i) => benchLesson(`offline:${f.id}`, f, r, vectors[i] ?? [], now));
  const related = queries.filter((q) => q.kind === "related");
  const qv = await embedder.embed(
    related.map((q) => taskQueryText({ task: q.text })),
    undefined,
    "query",
  );
  const offered = (pool: readonly IndexedLesson[], i: number) =>
    rankLessons(
      pool,
      {
        vector: unitVector(qv[i] ?? []) ?? new Float32Array(0),
        limit: lessonCheckCandidates,
        minImportance: 0.5,
        floor: 0,
        now,
      },
      embedder.similarityScale,
    ).map((r) => r.lesson.id);
  let alone = 0;
  let mixed = 0;
  related.forEach((q, i) => {
    if (offered(lessons, i).some((id) => q.right.includes(id))) alone += 1;
    if (offered([...lessons, ...extra], i).some((id) => q.right.includes(id))) mixed += 1;
  });
  const n = String(related.length);
  return `a right lesson among the ${String(lessonCheckCandidates)} the model is offered: ${String(alone)} / ${n} related queries with the 12 lessons; ${String(mixed)} / ${n} with the offline generator's lessons for the ${String(extra.length)} other τ-bench failures it writes one for mixed in (of ${String(others.length)})`;
}

/** A lesson written for a failure, as the index holds it: served, seen `now`, by the given vector. */
export function benchLesson(
  id: string,
  failure: RealFailure,
  reflection: Reflection,
  vector: readonly number[],
  now: Date,
): IndexedLesson {
  return {
    id,
    projectId: failure.event.projectId,
    strategyText: reflection.strategyText ?? null,
    learning: reflection.learning,
    adjustments: reflection.adjustments,
    tags: reflection.tags,
    importance: reflection.importance,
    effectiveQuality: 0.8,
    createdAt: now,
    lastSeenAt: now,
    vector: unitVector(vector) ?? new Float32Array(0),
  };
}
