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
import { lessonCheckCandidates } from "../src/features/lessons/lessons-for-task.js";
import { rankLessons, type IndexedLesson } from "../src/features/lessons/lessons-for-task-rank.js";
import type { Embedder } from "../src/pipeline/ports.js";

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
    candidates.map(({ lesson }) => ({
      advice: lesson.strategyText ?? lesson.learning,
      adjustments: lesson.adjustments,
      tags: lesson.tags,
    })),
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
