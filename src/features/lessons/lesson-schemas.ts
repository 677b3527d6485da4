import { z } from "zod";
import { servedMinQuality } from "../../domain/feedback/effective-quality.js";

const csvList = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().max(100)).max(20));

/** Query-string numbers arrive as text: an empty or non-numeric value is an error, never 0. */
const numeric = z
  .string()
  .trim()
  .regex(/^-?\d+(\.\d+)?$/, "must be a number")
  .transform(Number);

/** `limit` and its deprecated alias `k` (both given: 400); the route reads `pageSize`. */
function pageSize(max: number, fallback: number) {
  const size = numeric.pipe(z.number().int().min(1).max(max));
  return {
    limit: size
      .optional()
      .describe(`page size, 1 to ${max.toLocaleString("en")} (default ${String(fallback)})`),
    k: size
      .optional()
      .describe("deprecated alias of `limit` (answered with a `Deprecation` header)")
      .meta({ deprecated: true }),
  };
}

const oneSpelling = (query: { limit?: number | undefined; k?: number | undefined }, ctx: z.RefinementCtx) => {
  if (query.limit !== undefined && query.k !== undefined)
    ctx.addIssue({
      code: "custom",
      path: ["k"],
      message: "k is the deprecated spelling of limit: send limit alone",
    });
};

export const ReflectionsQuery = z
  .strictObject({
    q: z.string().max(500).optional().describe("words that must all appear"),
    tags: csvList.default([]).describe("comma-separated; all must match (at most 20)"),
    project: z.string().min(1).max(200).optional().describe("only lessons of this project"),
    min_importance: numeric
      .pipe(z.number().min(0).max(1))
      .default(0)
      .describe("a number from 0 to 1 (default 0)"),
    ...pageSize(100, 10),
    offset: numeric
      .pipe(z.number().int().min(0).max(10_000))
      .default(0)
      .describe("lessons to skip, 0 to 10,000 (default 0)"),
    include_withheld: z
      .enum(["true", "false"])
      .default("false")
      .describe(`also list lessons whose effective quality is below ${String(servedMinQuality)}`),
  })
  .superRefine(oneSpelling);

export const SignatureParams = z.strictObject({ signature: z.string().regex(/^[A-Za-z0-9:_.-]{1,200}$/) });

/** A reflection's attribution as the API shows it; documented in the OpenAPI document. */
export const AttributionJson = z
  .object({
    event_id: z.string().optional().describe("eventId of the trace step held responsible"),
    step_index: z.number().int().min(0).optional().describe("zero-based position of that step in the trace"),
    actor: z.string().optional().describe("the agent that produced the step"),
    tool_name: z.string().optional(),
    confidence: z.number().min(0).max(1),
    evidence: z.string().optional().describe("a short quote of the step, or the reason it was chosen"),
  })
  .describe("Where the failure went wrong and which agent did it; null for successes and older lessons.");

export const ReflectionIdParams = z.strictObject({ id: z.uuid() });
export const SourcesQuery = z.strictObject(pageSize(1000, 100)).superRefine(oneSpelling);
