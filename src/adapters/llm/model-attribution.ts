import { squeeze } from "../../domain/attribution/trace-scan.js";
import { Attribution, type TaskCompleted } from "../../domain/contracts/index.js";

/**
 * A model's `attribution`, read leniently. Real models add keys (`reason`, `step_id`), give a
 * step index past the end of the trace, write confidence as a percentage, or leave parts out.
 * None of that may cost the reflection: what is invalid is dropped, the rest kept, the step's
 * own `eventId`, actor and tool filled in from the trace. Undefined when nothing usable is left
 * (then the caller falls back to the offline attribution).
 */

/** Confidence when the model names a step but gives no usable number. */
export const defaultModelConfidence = 0.5;

const text = (value: unknown, max: number): string | undefined => {
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed.length > 0 ? trimmed.slice(0, max) : undefined;
};

function integer(value: unknown): number | undefined {
  const n = typeof value === "string" && /^\d{1,9}$/.test(value.trim()) ? Number(value) : value;
  return typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : undefined;
}

function confidenceOf(value: unknown): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return undefined;
  if (value <= 1) return value;
  // "85" meant 85 %.
  return value <= 100 ? value / 100 : undefined;
}

export function readModelAttribution(raw: unknown, event?: TaskCompleted): Attribution | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const fields = raw as Record<string, unknown>;
  const steps = event?.events;
  const inRange = (i: number | undefined) =>
    i !== undefined && (!steps || i < steps.length) ? i : undefined;

  let stepIndex = inRange(integer(fields.stepIndex ?? fields.step_index));
  const claimedEventId = text(fields.eventId ?? fields.event_id, 200);
  if (stepIndex === undefined && claimedEventId !== undefined && steps) {
    const found = steps.findIndex((s) => s.eventId === claimedEventId);
    if (found >= 0) stepIndex = found;
  }
  const step = stepIndex !== undefined ? steps?.[stepIndex] : undefined;
  // The trace is the truth about the step: an eventId that is not the step's is replaced.
  const eventId = step?.eventId ?? (steps ? undefined : claimedEventId);
  const actor = text(fields.actor ?? fields.agent, 200) ?? step?.actor;
  const toolName = text(fields.toolName ?? fields.tool_name ?? fields.tool, 200) ?? step?.toolName;
  const evidence = typeof fields.evidence === "string" ? squeeze(fields.evidence) : undefined;
  if (stepIndex === undefined && eventId === undefined && actor === undefined) return undefined;

  const candidate = {
    ...(eventId !== undefined ? { eventId } : {}),
    ...(stepIndex !== undefined ? { stepIndex } : {}),
    ...(actor !== undefined ? { actor } : {}),
    ...(toolName !== undefined ? { toolName } : {}),
    confidence: confidenceOf(fields.confidence) ?? defaultModelConfidence,
    ...(evidence ? { evidence } : {}),
  };
  const checked = Attribution.safeParse(candidate);
  return checked.success ? checked.data : undefined;
}

/**
 * How often a capable model's attribution named the annotated step on the tune split of public
 * annotated failure logs (bench/attribution.ts: 8 of 18 recorded answers). A model's own
 * `confidence` is not calibrated (it said 0.7–0.9 for those answers), so it is not compared.
 */
export const modelAttributionPrecision = 0.44;

/**
 * Offline rules at least this precise (their confidence is their measured precision) outrank the
 * model: an error the run never recovered from, a tool-using agent's first change of state. Nearly
 * twice the model's precision; the middling rules (a shortcut cue, an answer's source) do not.
 */
export const offlinePrevailsAtConfidence = 0.8;

/**
 * The attribution a reflection carries: the model's when it gives one, unless the offline rules
 * found the step on evidence that has proven far more precise than the model has.
 */
export function chooseAttribution(model: Attribution | undefined, offline: Attribution): Attribution {
  if (!model) return offline;
  return offline.confidence >= offlinePrevailsAtConfidence && offline.stepIndex !== undefined
    ? offline
    : model;
}
