import { z } from "zod";
import { lessonPrompt, servedLesson } from "../../domain/lessons/lesson-prompt.js";
import { screenInstructions } from "../../domain/quality/lesson-screen.js";
import type { LessonCheck, LessonCheckCandidate } from "../../pipeline/lesson-check.js";
import type { Embedder } from "../../pipeline/ports.js";
import type { LessonIndex } from "./lessons-for-task-index.js";
import { taskQueryText, unitVector, type IndexedLesson, type RankedLesson } from "./lessons-for-task-rank.js";
import { wordsOf } from "./task-words.js";

/**
 * "What should I watch for before I start this task?": the tenant's lessons that apply to a task,
 * by meaning, with each lesson ready to put into the agent's prompt.
 */

/**
 * The default relevance floor (calibrated 0–1 scale of `lessons-for-task-rank.ts`), tuned on the
 * tune half of `npm run bench -- lessons-for-task` and checked on its held-out half; see
 * docs/benchmarks.md.
 */
export const defaultRelevanceFloor = 0.28;

/**
 * With the model check on, the model is asked about this many lessons by default
 * (`LESSONS_FOR_TASK_CHECK_CANDIDATES`), the nearest to the task in meaning above relevance 0 (or
 * the request's limit, when larger). On the real airline tasks of `npm run bench -- lessons-for-task`
 * a right lesson was among the 8 nearest for 137 of 138 tasks with its 12 lessons; with 34 more
 * lessons of the same tasks mixed in, for 109 at 8, 126 at 16 and 133 at 24 (a lower bound: the
 * added lessons are unlabelled). A tenant with many lessons of one kind may want more.
 */
export const lessonCheckCandidates = 8;

/**
 * A lesson as the model check reads it: its advice (strategy, or learning), adjustments and tags,
 * only what the lesson screen passes (no order to agents, which could steer the model's choice),
 * given to the model as quoted data.
 */
export function checkCandidateOf(lesson: IndexedLesson): LessonCheckCandidate {
  const served = servedLesson(lesson);
  return {
    advice: served.strategyText,
    adjustments: served.adjustments,
    tags: screenInstructions(lesson.tags).kept,
  };
}

export const LessonsForTaskBody = z.strictObject({
  task: z.string().trim().min(1).max(8_000).describe("what the agent is about to do"),
  goal: z.string().max(4_000).optional(),
  agentId: z
    .string()
    .max(200)
    .optional()
    .describe("the agent that will do it (not a filter: lessons are per tenant)"),
  tools: z.array(z.string().max(200)).max(50).optional().describe("the tools it will use"),
  projectId: z.string().max(200).optional().describe("only lessons of this project"),
  tags: z
    .array(z.string().max(100))
    .max(20)
    .optional()
    .describe("only lessons carrying every one of these tags (at most 20)"),
  loopId: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe(
      "the loop id the agent will publish this task's completion under: the lessons served are remembered, and that completion's success or same failure counts for or against them",
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(50)
    .default(5)
    .describe("at most this many lessons, 1 to 50 (default 5)"),
  minImportance: z.number().min(0).max(1).default(0.5).describe("0 to 1 (default 0.5)"),
  minRelevance: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe(`relevance floor, 0 to 1 (default ${String(defaultRelevanceFloor)})`),
});
export type LessonsForTaskBody = z.infer<typeof LessonsForTaskBody>;

export interface LessonForTask {
  reflectionId: string;
  relevance: number;
  effectiveQuality: number;
  importance: number;
  strategyText: string;
  adjustments: string[];
  tags: string[];
  projectId: string;
  createdAt: string;
  prompt: string;
  /** Tasks that applied it (carried by a rerun or retrieved) and succeeded (`helped`) or failed the same way (`failedAgain`). */
  applied: { helped: number; failedAgain: number };
}

/**
 * Where the lessons served for a loop are remembered until its completion is processed
 * (`src/pipeline/lesson-outcomes.ts`); implemented by `src/adapters/postgres/pg-lesson-retrievals.ts`.
 */
export interface LessonRetrievalLog {
  record(tenantId: string, loopId: string, reflectionIds: readonly string[], at: Date): Promise<void>;
}

export interface LessonsForTaskDeps {
  index: LessonIndex;
  embedder: Pick<Embedder, "embed" | "similarityScale">;
  clock: { now(): Date };
  floor?: number;
  /** Absent: a request's `loopId` is not remembered (`recordedFor: null`). */
  retrievals?: LessonRetrievalLog;
  /**
   * A model's reading of which of the nearest lessons apply (`LESSONS_FOR_TASK_CHECK=model`).
   * Absent, or without a usable answer: meaning and shared rare words decide.
   */
  check?: LessonCheck;
  /** How many of the nearest lessons the check reads (default `lessonCheckCandidates`). */
  checkCandidates?: number;
  /**
   * Failures a lesson must stand for before it is served for other tasks (LESSONS_SERVE_MIN_OCCURRENCES,
   * default 1): at 2, a lesson one trace wrote reaches other agents only once a second failure
   * was filed under it, or once an operator approved it. Its own loop's rerun carries it whatever
   * this says.
   */
  minOccurrences?: number;
}

export interface LessonsForTaskAnswer {
  lessons: LessonForTask[];
  floor: number;
  /** The loop the served lessons were remembered for; null when none was given (or none is kept). */
  recordedFor: string | null;
  /**
   * What chose the lessons: `model`, the lesson check among the nearest in meaning; `meaning`,
   * relevance and shared rare words (the check is off, or the model gave no usable answer).
   */
  checkedBy: "model" | "meaning";
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export function createLessonsForTask(deps: LessonsForTaskDeps) {
  const defaultFloor = deps.floor ?? defaultRelevanceFloor;
  return {
    /**
     * `record`: whether the served lessons may be remembered for `body.loopId` (the caller may
     * vote, and the tenant is within its rate of remembered retrievals); false answers the same
     * lessons with `recordedFor: null`.
     */
    async forTask(
      tenantId: string,
      body: LessonsForTaskBody,
      signal?: AbortSignal,
      record = true,
    ): Promise<LessonsForTaskAnswer> {
      const floor = body.minRelevance ?? defaultFloor;
      const loopId = deps.retrievals && record ? (body.loopId ?? null) : null;
      const text = taskQueryText(body);
      const [indexed, vectors] = await Promise.all([
        deps.index.lessonsOf(tenantId),
        // The task asks; the lessons' stored vectors are passages (a model with prefixes reads them apart).
        deps.embedder.embed([text], tenantId, "query"),
      ]);
      const minOccurrences = deps.minOccurrences ?? 1;
      const admit =
        minOccurrences <= 1
          ? undefined
          : (l: IndexedLesson) => l.approved === true || (l.occurrences ?? 1) >= minOccurrences;
      const vector = unitVector(vectors[0] ?? []);
      // A task with no words the embedder knows is like no lesson at all.
      if (!vector) return { lessons: [], floor, recordedFor: loopId, checkedBy: "meaning" };
      const query = {
        vector,
        projectId: body.projectId,
        tags: body.tags,
        minImportance: body.minImportance,
        now: deps.clock.now(),
      };
      let checkedBy: LessonsForTaskAnswer["checkedBy"] = "meaning";
      let ranked: RankedLesson[] | null = null;
      if (deps.check) {
        // The nearest in meaning above the floor, without the shared words: the model reads what
        // the task needs, which those only approximate. The floor holds whatever the model picks.
        const candidates = indexed.rank(
          {
            ...query,
            limit: Math.max(body.limit, deps.checkCandidates ?? lessonCheckCandidates),
            floor,
          },
          deps.embedder.similarityScale,
          admit,
        );
        const picked =
          candidates.length === 0
            ? []
            : await deps.check.applies(
                tenantId,
                { task: body.task, goal: body.goal, tools: body.tools },
                candidates.map(({ lesson }) => checkCandidateOf(lesson)),
                signal,
              );
        if (picked !== null) {
          checkedBy = "model";
          ranked = picked.flatMap((i) => candidates[i] ?? []).slice(0, body.limit);
        }
      }
      ranked ??= indexed.rank(
        {
          ...query,
          limit: body.limit,
          floor,
          words: { task: new Set(wordsOf(text)), rarity: deps.index.rarityOf(tenantId) },
        },
        deps.embedder.similarityScale,
        admit,
      );
      // Remembered before the answer goes out, so the task's completion cannot arrive first.
      if (loopId !== null && ranked.length > 0)
        await deps.retrievals?.record(
          tenantId,
          loopId,
          ranked.map((r) => r.lesson.id),
          deps.clock.now(),
        );
      return {
        floor,
        recordedFor: loopId,
        checkedBy,
        lessons: ranked.map(({ lesson, relevance }) => ({
          reflectionId: lesson.id,
          relevance: round(relevance),
          effectiveQuality: round(lesson.effectiveQuality),
          importance: round(lesson.importance),
          // Only what the lesson screen passes is served, here as in the prompt.
          ...servedLesson(lesson),
          tags: lesson.tags,
          projectId: lesson.projectId,
          createdAt: lesson.createdAt.toISOString(),
          prompt: lessonPrompt(lesson),
          applied: lesson.applied ?? { helped: 0, failedAgain: 0 },
        })),
      };
    },
  };
}

export type LessonsForTask = ReturnType<typeof createLessonsForTask>;
