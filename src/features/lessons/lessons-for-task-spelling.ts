import { z } from "zod";
import {
  defaultRelevanceFloor,
  type LessonForTask,
  type LessonsForTaskAnswer,
  type LessonsForTaskBody,
} from "./lessons-for-task.js";

/**
 * `POST /api/v1/lessons/for-task` in the API's one style, snake_case, with the camelCase it took
 * before accepted for the deprecation period (docs/api.md#deprecations): a request that spells
 * any field in camelCase is answered in camelCase, with a `Deprecation` header; one field given
 * in both spellings is refused.
 */

const loopId = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .describe(
    "the loop id the agent will publish this task's completion under: the lessons served are remembered, and that completion's success or same failure counts for or against them",
  );
const agentId = z
  .string()
  .max(200)
  .describe("the agent that will do it (not a filter: lessons are per tenant)");
const projectId = z.string().max(200).describe("only lessons of this project");
const minImportance = z.number().min(0).max(1).describe("0 to 1 (default 0.5)");
const minRelevance = z
  .number()
  .min(0)
  .max(1)
  .describe(`relevance floor, 0 to 1 (default ${String(defaultRelevanceFloor)})`);

/** Each camelCase field and the snake_case one it is now. */
const renamed = {
  agentId: "agent_id",
  projectId: "project_id",
  loopId: "loop_id",
  minImportance: "min_importance",
  minRelevance: "min_relevance",
} as const;

const deprecated = <T extends z.ZodType>(schema: T, now: string) =>
  schema.optional().describe(`deprecated: send \`${now}\``).meta({ deprecated: true });

export const LessonsForTaskRequest = z
  .strictObject({
    task: z.string().trim().min(1).max(8_000).describe("what the agent is about to do"),
    goal: z.string().max(4_000).optional(),
    agent_id: agentId.optional(),
    tools: z.array(z.string().max(200)).max(50).optional().describe("the tools it will use"),
    project_id: projectId.optional(),
    tags: z
      .array(z.string().max(100))
      .max(20)
      .optional()
      .describe("only lessons carrying every one of these tags (at most 20)"),
    loop_id: loopId.optional(),
    limit: z
      .number()
      .int()
      .min(1)
      .max(50)
      .optional()
      .describe("at most this many lessons, 1 to 50 (default 5)"),
    min_importance: minImportance.optional(),
    min_relevance: minRelevance.optional(),
    agentId: deprecated(agentId, "agent_id"),
    projectId: deprecated(projectId, "project_id"),
    loopId: deprecated(loopId, "loop_id"),
    minImportance: deprecated(minImportance, "min_importance"),
    minRelevance: deprecated(minRelevance, "min_relevance"),
  })
  .superRefine((body, ctx) => {
    for (const [camel, snake] of Object.entries(renamed)) {
      if (body[camel as keyof typeof renamed] !== undefined && body[snake] !== undefined)
        ctx.addIssue({
          code: "custom",
          path: [camel],
          message: `${camel} is the deprecated spelling of ${snake}: send ${snake} alone`,
        });
    }
  })
  .transform((body): { body: LessonsForTaskBody; camelCase: boolean } => ({
    camelCase: Object.keys(renamed).some((camel) => body[camel as keyof typeof renamed] !== undefined),
    body: {
      task: body.task,
      goal: body.goal,
      agentId: body.agent_id ?? body.agentId,
      tools: body.tools,
      projectId: body.project_id ?? body.projectId,
      tags: body.tags,
      loopId: body.loop_id ?? body.loopId,
      limit: body.limit ?? 5,
      minImportance: body.min_importance ?? body.minImportance ?? 0.5,
      minRelevance: body.min_relevance ?? body.minRelevance,
    },
  }));

const unit = z.number().min(0).max(1);

export const LessonForTaskJson = z
  .object({
    reflection_id: z.string(),
    relevance: unit,
    effective_quality: unit,
    importance: unit,
    strategy_text: z.string(),
    adjustments: z.array(z.string()),
    tags: z.array(z.string()),
    project_id: z.string(),
    created_at: z.string(),
    prompt: z
      .string()
      .describe("the lesson as one text for the agent's prompt, framed as advice from past runs"),
    applied: z.object({ helped: z.number().int(), failed_again: z.number().int() }),
  })
  .meta({ id: "LessonForTask" });

export const LessonsForTaskJson = z
  .object({
    lessons: z.array(LessonForTaskJson),
    floor: unit,
    recorded_for: z.string().nullable().describe("the loop the lessons were remembered for; null when none"),
    checked_by: z.enum(["model", "meaning"]),
  })
  .meta({ id: "LessonsForTask" })
  .describe(
    "`lessons`: at most `limit`, best first, each with `relevance` (0–1; at or above `floor`, whatever chose them) and a `prompt` to put into the agent's prompt; withheld lessons are never served. `checked_by`: `model` when a model chose them among the nearest in meaning (`LESSONS_FOR_TASK_CHECK=model`), `meaning` otherwise",
  );

/** The answer a request in the deprecated camelCase gets (not in the OpenAPI document). */
export const LessonsForTaskCamelCase = z.object({
  lessons: z.array(
    z.object({
      reflectionId: z.string(),
      relevance: unit,
      effectiveQuality: unit,
      importance: unit,
      strategyText: z.string(),
      adjustments: z.array(z.string()),
      tags: z.array(z.string()),
      projectId: z.string(),
      createdAt: z.string(),
      prompt: z.string(),
      applied: z.object({ helped: z.number().int(), failedAgain: z.number().int() }),
    }),
  ),
  floor: unit,
  recordedFor: z.string().nullable(),
  checkedBy: z.enum(["model", "meaning"]),
});

function lessonJson(lesson: LessonForTask): z.output<typeof LessonForTaskJson> {
  return {
    reflection_id: lesson.reflectionId,
    relevance: lesson.relevance,
    effective_quality: lesson.effectiveQuality,
    importance: lesson.importance,
    strategy_text: lesson.strategyText,
    adjustments: lesson.adjustments,
    tags: lesson.tags,
    project_id: lesson.projectId,
    created_at: lesson.createdAt,
    prompt: lesson.prompt,
    applied: { helped: lesson.applied.helped, failed_again: lesson.applied.failedAgain },
  };
}

/** The answer in snake_case. */
export function lessonsForTaskJson(answer: LessonsForTaskAnswer): z.output<typeof LessonsForTaskJson> {
  return {
    lessons: answer.lessons.map(lessonJson),
    floor: answer.floor,
    recorded_for: answer.recordedFor,
    checked_by: answer.checkedBy,
  };
}
