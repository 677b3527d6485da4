import { z } from "zod";
import { cutMiddle, traceStepTextMaxChars } from "./cut-text.js";

/** What an agent publishes on `agent.task.completed` (key: `loopId`) after each task. */

const unitScore = z.number().min(0).max(1);

/** C0 control characters other than tab, line feed and carriage return, and DEL. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || code === 0x7f) return true;
  }
  return false;
}

/**
 * A name or an id: at most `max` characters, well-formed Unicode (no lone surrogate), no control
 * character. Such strings end up in keys, indexes and headers, where a NUL byte or an escape
 * sequence has no business and Postgres refuses some of them.
 */
export const boundedName = (max = 200) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((text) => text.isWellFormed(), "is not well-formed Unicode (a lone surrogate)")
    .refine((text) => !hasControlCharacter(text), "contains a control character");
const nonEmpty = boundedName();
/** An error code: like a name, but may be empty (traces carry `"code": ""`). */
const errorCode = z
  .string()
  .max(200)
  .refine((text) => text.isWellFormed(), "is not well-formed Unicode (a lone surrogate)")
  .refine((text) => !hasControlCharacter(text), "contains a control character");

/**
 * Free text (a description, a message, a step's output): control characters such as terminal
 * escapes are kept, being part of real traces; what Postgres cannot store is replaced: a NUL
 * byte by U+FFFD, a lone surrogate by U+FFFD (`toWellFormed`).
 */
const storable = (text: string) => text.replaceAll("\u0000", "\uFFFD").toWellFormed();
/** Free text up to `max` characters, made storable (see `storable`). */
export const storableText = (max: number) => z.string().max(max).transform(storable);

/**
 * Open maps (`metadata`, `context`): at most 64 KiB as JSON and 10 levels deep, so a producer
 * cannot make the prompt builder or the JSON encoder recurse without end.
 */
const openMapMaxBytes = 65_536;
const openMapMaxDepth = 10;
function depthOf(value: unknown, limit: number): number {
  let depth = 0;
  let level: unknown[] = [value];
  while (level.length > 0 && depth <= limit) {
    const next: unknown[] = [];
    for (const item of level) {
      if (typeof item === "object" && item !== null)
        for (const value of Object.values(item)) next.push(value);
    }
    if (next.length === 0) break;
    depth += 1;
    level = next;
  }
  return depth;
}
/** An issue when `value` is deeper or larger than an open map may be; checks depth before size. */
function openMapProblem(value: unknown, extraBytes = 0): string | null {
  if (depthOf(value, openMapMaxDepth) > openMapMaxDepth)
    return `nests deeper than ${String(openMapMaxDepth)} levels`;
  // Only now is JSON.stringify safe: it recurses once per level.
  if (Buffer.byteLength(JSON.stringify(value)) > openMapMaxBytes + extraBytes)
    return `is larger than ${String(openMapMaxBytes)} bytes as JSON`;
  return null;
}
const openMap = z
  .record(z.string(), z.unknown())
  .superRefine((map, ctx) => {
    const problem = openMapProblem(map);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .transform((map) => JSON.parse(storable(JSON.stringify(map))) as Record<string, unknown>);

/** Rerun numbers (`<root>_r<n>`) a loop family can reach; beyond this the id is not a rerun we made. */
export const maxRerunNumber = 100_000;
/**
 * The one reading of a rerun's id, `<root>_r<n>`, for the contract, the HTTP body and the loop
 * family alike: any number of digits, so that no length of number slips past the bound.
 */
export const rerunSuffix = /_r(\d+)$/;

/** Why a loop id's rerun number is refused (beyond `maxRerunNumber`), or null. */
export function rerunNumberProblem(loopId: string): string | null {
  const n = rerunSuffix.exec(loopId)?.[1];
  if (n === undefined) return null;
  // Compared as digits first: a number of 400 digits is no Number.
  const digits = n.replace(/^0+(?=\d)/, "");
  if (digits.length <= String(maxRerunNumber).length && Number(digits) <= maxRerunNumber) return null;
  return `rerun number ${n.length > 20 ? `${n.slice(0, 20)}… (${String(n.length)} digits)` : n} is beyond ${String(maxRerunNumber)}`;
}

export const Outcome = z.enum(["success", "failure", "partial", "timeout", "error"]);
export type Outcome = z.infer<typeof Outcome>;

export const TraceEventType = z.enum([
  "tool_call",
  "tool_response",
  "llm_call",
  "llm_response",
  "error_event",
  "system_event",
]);
export type TraceEventType = z.infer<typeof TraceEventType>;

/**
 * Text of one trace step: any length is accepted, and text longer than the per-step limit is cut
 * in the middle with a visible marker (see cut-text.ts) instead of failing the whole event.
 */
const stepText = z
  .string()
  .describe(
    `Longer than ${String(traceStepTextMaxChars)} characters is accepted and cut in the middle: head and tail are kept around a "…[cut N characters]…" marker.`,
  )
  .transform((text) => cutMiddle(storable(text), traceStepTextMaxChars));

export const TraceEvent = z.object({
  eventId: nonEmpty,
  type: TraceEventType,
  timestamp: z.iso.datetime({ offset: true }),
  content: stepText,
  toolName: boundedName(200).optional(),
  /** The agent or role that produced the step, in a multi-agent system (e.g. `planner`, `WebSurfer`). */
  actor: nonEmpty.max(200).optional(),
  metadata: openMap.optional(),
  error: z
    .object({
      message: stepText.optional(),
      code: errorCode.optional(),
    })
    // Other keys a producer puts in a step's error are kept, bounded like the open maps.
    .catchall(z.unknown())
    .superRefine((error, ctx) => {
      // The message is cut to the step limit already; the other keys are bounded like open maps.
      const problem = openMapProblem(error, traceStepTextMaxChars * 3);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional(),
});
export type TraceEvent = z.infer<typeof TraceEvent>;

export const TaskError = z.object({
  /** Broad family, e.g. `timeout_error`, `tool_error`, `validation_error`. */
  category: boundedName(200),
  /** Narrower type used in the error signature when present. */
  type: boundedName(200).optional(),
  message: z.string().min(1).max(16_000).transform(storable),
  code: errorCode.optional(),
  context: openMap.optional(),
});
export type TaskError = z.infer<typeof TaskError>;

export const TaskTier = z.enum(["inline", "oracle-only", "container-light", "container-full"]);

export const TaskCompletedV1 = z
  .object({
    schemaVersion: z.literal(1),
    eventId: nonEmpty.max(200),
    tenantId: nonEmpty.max(200),
    projectId: nonEmpty.max(200),
    agentId: nonEmpty.max(200),
    sessionId: nonEmpty.max(200).optional(),
    taskId: nonEmpty.max(200),
    loopId: nonEmpty.max(200),
    rerunOf: nonEmpty.max(200).optional(),
    occurredAt: z.iso.datetime({ offset: true }),
    task: z.object({
      description: z.string().trim().min(1).max(16_000).transform(storable),
      goal: storableText(16_000).optional(),
      query: storableText(64_000).optional(),
      answer: storableText(64_000).optional(),
      tier: TaskTier.optional(),
      importance: unitScore.optional(),
    }),
    outcome: Outcome,
    error: TaskError.optional(),
    events: z.array(TraceEvent).max(2_000),
    scores: z
      .object({
        alignment: unitScore.optional(),
        drift: unitScore.optional(),
        qualityBefore: unitScore.optional(),
        qualityAfter: unitScore.optional(),
      })
      .optional(),
    biasTags: z
      .array(z.object({ tag: nonEmpty.max(100), severity: z.enum(["low", "medium", "high"]).optional() }))
      .max(100)
      .optional(),
    persona: z
      .object({ orchestrator: boundedName(200).optional(), reflection: boundedName(200).optional() })
      .optional(),
    verificationResults: z
      .array(
        z.object({
          status: z.enum(["verified", "unverified", "conflict", "refuted"]),
          claimText: storableText(16_000).optional(),
          conflictReason: storableText(16_000).optional(),
        }),
      )
      .max(500)
      .optional(),
    /**
     * Memories the agent relates to this task (the lessons it was served, its own memory ids):
     * kept with the lesson written for it as `related_memory_ids`.
     */
    relatedMemoryIds: z.array(nonEmpty.max(200)).max(50).optional(),
    /** The agent's own evaluator pass: its critique and whether it revised the answer. */
    evaluation: z
      .object({
        critique: storableText(16_000).optional(),
        iteration: z.number().int().min(0).max(1_000_000).optional(),
        revised: z.boolean().optional(),
      })
      .optional(),
  })
  .superRefine((event, ctx) => {
    if (event.rerunOf !== undefined && event.rerunOf === event.loopId) {
      ctx.addIssue({ code: "custom", path: ["rerunOf"], message: "a loop cannot rerun itself" });
    }
    for (const field of ["loopId", "rerunOf"] as const) {
      const problem = rerunNumberProblem(event[field] ?? "");
      if (problem) ctx.addIssue({ code: "custom", path: [field], message: problem });
    }
  });
export type TaskCompleted = z.infer<typeof TaskCompletedV1>;

export function isFailureOutcome(outcome: Outcome): boolean {
  return outcome !== "success";
}
