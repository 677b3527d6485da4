import type { z } from "zod";
import { ReflectorError } from "../errors.js";
import { ReflectionFeedbackV1, type ReflectionFeedback } from "./reflection-feedback.js";
import { TaskCompletedV1, type TaskCompleted } from "./task-completed.js";

/** Zod issues as one readable line, the first ten: `task.description: Too small; outcome: Invalid option`. */
export function describeIssues(error: {
  issues: readonly { path: PropertyKey[]; message: string }[];
}): string {
  return error.issues
    .slice(0, 10)
    .map((issue) => `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`)
    .join("; ");
}

/**
 * A consumed value against a version-1 contract: another `schemaVersion` is
 * UNSUPPORTED_SCHEMA_VERSION, anything else the schema refuses is SCHEMA_INVALID.
 */
export function parseContract<Schema extends z.ZodType>(schema: Schema, raw: unknown): z.output<Schema> {
  if (typeof raw === "object" && raw !== null && "schemaVersion" in raw && raw.schemaVersion !== 1) {
    throw new ReflectorError(
      "UNSUPPORTED_SCHEMA_VERSION",
      `schemaVersion ${JSON.stringify(raw.schemaVersion)} is not supported (this build reads 1)`,
    );
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ReflectorError("SCHEMA_INVALID", describeIssues(parsed.error));
  return parsed.data;
}

export function parseTaskCompleted(raw: unknown): TaskCompleted {
  return parseContract(TaskCompletedV1, raw);
}

export function parseReflectionFeedback(raw: unknown): ReflectionFeedback {
  return parseContract(ReflectionFeedbackV1, raw);
}
