import { createHash } from "node:crypto";
import type { TaskCompleted } from "./contracts/index.js";
import { findingFromEvaluation } from "./evaluation/reflection-from-evaluation.js";

// node:crypto is the one non-zod import in the domain: hashing is deterministic and pure.

/** Seed 003: first 16 hex chars of sha256(`error_type:normalized content`), content lower-cased and trimmed. */
export function computeErrorSignature(errorType: string, content: string): string {
  const key = `${errorType}:${content.toLowerCase().trim()}`;
  return createHash("sha256").update(key, "utf8").digest("hex").slice(0, 16);
}

/**
 * Messages carry ids, timestamps and counts that differ between two occurrences of the same
 * failure; left in, no two timeouts would share a signature and nothing would ever dedupe.
 */
export function maskVolatileTokens(text: string): string {
  return text
    .replace(/\b\d{4}-\d{2}-\d{2}[t ][\d:.]+(z|[+-]\d{2}:?\d{2})?/gi, "<time>")
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>")
    .replace(/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi, "<hex>")
    .replace(/(?<![a-z_])\d+(\.\d+)?/gi, "<n>")
    .replace(/\s+/g, " ");
}

export interface SignatureInput {
  errorType: string;
  content: string;
  /** What the signature rests on: the reported error, the evaluator's finding, a failed step, or the task. */
  source: "error" | "evaluation" | "trace" | "task";
}

/**
 * What a task's signature is computed from, before any LLM call. A reported error wins; then
 * the evaluator's finding (seed 003: conflict, unverified claim, factual error, quality gain);
 * then the last failed step; successes and bare failures fall back to the task itself.
 */
export function signatureInputFor(event: TaskCompleted): SignatureInput {
  if (event.error) {
    return {
      errorType: event.error.type ?? event.error.category,
      content: maskVolatileTokens(`${event.error.code ?? ""} ${event.error.message}`),
      source: "error",
    };
  }
  const finding = findingFromEvaluation(event);
  if (finding)
    return {
      errorType: finding.errorType,
      content: maskVolatileTokens(finding.content),
      source: "evaluation",
    };
  const lastError = event.events.findLast((e) => e.type === "error_event" || e.error !== undefined);
  if (event.outcome !== "success" && lastError) {
    const message = lastError.error?.message ?? lastError.content;
    return {
      errorType: lastError.error?.code ?? event.outcome,
      content: maskVolatileTokens(`${lastError.toolName ?? ""} ${message}`),
      source: "trace",
    };
  }
  return { errorType: event.outcome, content: maskVolatileTokens(event.task.description), source: "task" };
}

export function signatureFor(event: TaskCompleted): string {
  const input = signatureInputFor(event);
  return computeErrorSignature(input.errorType, input.content);
}
