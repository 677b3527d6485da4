import { z } from "zod";
import { ProblemJson } from "../api-context.js";
import { AttributionJson } from "./lesson-schemas.js";

/**
 * The lessons feature's answers as documented in the OpenAPI document (`lesson-json.ts` and the
 * routes build them); the response check of the tests holds every answer to these.
 */

const unit = z.number().min(0).max(1);
const Attribution = AttributionJson.nullable();

export const FeedbackCounts = z.object({
  helpful: z.number().int(),
  harmful: z.number().int(),
  latest_rating: z.enum(["up", "down"]).nullable(),
});

const Effectiveness = z.object({
  recurrences_after_publication: z.number().int(),
  days_since_publication: z.number(),
  recurrences_per_week: z.number(),
  verdict: z.enum(["effective", "ineffective", "insufficient_data"]),
});

/** What a stored lesson keeps of the event it was written for; null for lessons stored before it was kept. */
export const RecordMetadataJson = z
  .object({
    outcome: z.string(),
    task_description: z.string(),
    event_count: z.number().int(),
    session_id: z.string().nullable(),
    agent_id: z.string(),
    task_id: z.string(),
    context: z.object({
      error_signature: z.string(),
      original_query: z.string().nullable(),
      iteration_count: z.number().int().nullable(),
      quality_improvement: z.number().nullable(),
      reflection_context: z.string(),
    }),
    relationships: z.object({
      source_event_id: z.string(),
      source_step_ids: z.array(z.string()),
      related_memory_ids: z.array(z.string()),
    }),
    generated_at: z.string(),
  })
  .nullable()
  .meta({ id: "RecordMetadata" });

export const LessonJson = z
  .object({
    id: z.string(),
    signature: z.string(),
    project_id: z.string(),
    reflection_text: z.string(),
    strategy_text: z.string().nullable(),
    strategy_id: z.string().nullable(),
    strategy_importance: z.number().nullable(),
    learning: z.string(),
    importance: unit,
    confidence: unit,
    judged_quality: unit,
    effective_quality: unit,
    served: z.boolean(),
    verdict: z.string(),
    tags: z.array(z.string()),
    error_category: z.string().nullable(),
    attribution: Attribution,
    occurrences: z.number().int(),
    first_seen_at: z.string(),
    last_seen_at: z.string(),
    feedback: FeedbackCounts,
    effectiveness: Effectiveness,
    rank: z.number().nullable(),
    metadata: RecordMetadataJson,
  })
  .meta({ id: "Lesson" });

export const ReflectionsAnswer = z
  .object({
    items: z.array(LessonJson),
    limit: z.number().int().describe("the page size"),
    k: z.number().int().describe("deprecated: the page size, as `limit`").meta({ deprecated: true }),
    offset: z.number().int(),
    next_offset: z.number().int().nullable().describe("null on the last page"),
  })
  .meta({ id: "LessonPage" })
  .describe("`items` are stored lessons, best first; `next_offset` is null on the last page");

export const SourcesAnswer = z
  .object({
    reflection_id: z.string(),
    sources: z.array(
      z.object({
        event_id: z.string(),
        loop_id: z.string(),
        signature: z.string(),
        processed_at: z.string(),
      }),
    ),
  })
  .meta({ id: "LessonSources" })
  .describe("`sources`: the processed events filed under the lesson, oldest first");

export const SignatureAnswer = z
  .object({
    signature: z.string(),
    seen_before: z.literal(true),
    occurrences: z.number().int(),
    first_seen_at: z.string(),
    last_seen_at: z.string(),
    lesson: z
      .object({
        reflection_id: z.string(),
        learning: z.string(),
        strategy: z.string().nullable(),
        reflection_text: z.string(),
        judged_quality: unit,
        effective_quality: unit,
        attribution: Attribution,
        metadata: RecordMetadataJson,
      })
      .nullable(),
    lesson_withheld: z
      .object({
        reflection_id: z.string(),
        reason: z.string(),
        judged_quality: unit,
        effective_quality: unit,
      })
      .nullable(),
    feedback: FeedbackCounts,
    effectiveness: Effectiveness,
  })
  .meta({ id: "SignatureSeen" })
  .describe("seen before: the lesson, or why it is withheld");

export const SignatureUnseen = ProblemJson.extend({
  signature: z.string(),
  seen_before: z.literal(false),
  occurrences: z.literal(0),
}).describe("never seen for this tenant (`seen_before: false`)");

export const InsightsAnswer = z
  .object({
    tenant_id: z.string(),
    common_issues: z.array(z.object({ issue: z.string(), count: z.number().int() })),
  })
  .meta({ id: "Insights" })
  .describe("the tenant's common issues");

export const SplitAnswer = z
  .object({
    reflection_id: z.string(),
    new_reflection_id: z.string().nullable(),
    moved_event_ids: z.array(z.string()),
    remaining_sources: z.number().int(),
    moved_signatures: z.array(z.string()),
  })
  .meta({ id: "LessonSplit" })
  .describe("the split: `new_reflection_id` is null when the sources went to no lesson");

export const SplitsAnswer = z
  .object({
    splits: z.array(
      z.object({
        id: z.string(),
        reflection_id: z.string(),
        new_reflection_id: z.string().nullable(),
        to: z.enum(["new_lesson", "unassigned"]),
        moved_event_ids: z.array(z.string()),
        moved_signatures: z.array(z.string()),
        remaining_sources: z.number().int(),
        actor: z.string(),
        split_at: z.string(),
      }),
    ),
  })
  .meta({ id: "LessonSplitAudit" })
  .describe("the audit of splits, newest first");

export const ApprovalAnswer = z
  .object({
    reflection_id: z.string(),
    approved_at: z.string(),
    approved_by: z.string(),
    occurrences: z.number().int(),
  })
  .meta({ id: "LessonApproval" })
  .describe("the approval (the first one stands)");
