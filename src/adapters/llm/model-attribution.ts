import { normalise, squeeze } from "../../domain/attribution/trace-scan.js";
import {
  defaultCalibration,
  heldOutPrecision,
  type AttributionCalibration,
} from "../../domain/attribution/calibration.js";
import { reportedBases, type AttributionBasis } from "../../domain/attribution/located-failure.js";
import { isOutsideTeam } from "../../domain/quality/trace-facts.js";
import { Attribution, type TaskCompleted, type TraceEvent } from "../../domain/contracts/index.js";

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

/** At most this many pieces of a quote are searched for, each at most `quoteNeedleChars` long. */
const quotePiecesSearched = 4;
const quoteNeedleChars = 80;
/** Shorter pieces ("...", a name) would be found in many steps and tell nothing. */
const quotePieceMinChars = 16;

const quoteMarks = new Set(['"', "'", "`", "*", " ", "-", "“", "”", "‘", "’"]);

/** `text` without the quote marks, emphasis and spaces around it. */
function unquote(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && quoteMarks.has(text.charAt(start))) start += 1;
  while (end > start && quoteMarks.has(text.charAt(end - 1))) end -= 1;
  return text.slice(start, end);
}

/**
 * The pieces of a model's quoted evidence worth looking for in the trace: models join excerpts
 * with "..." and wrap them in quotes, so each excerpt is searched on its own, normalised.
 */
export function quotePieces(evidence: string): string[] {
  return evidence
    .slice(0, quotePiecesSearched * quoteNeedleChars * 4)
    .split(/\.\.\.|…/)
    .map((piece) => unquote(normalise(piece)).slice(0, quoteNeedleChars))
    .filter((piece) => piece.length >= quotePieceMinChars)
    .slice(0, quotePiecesSearched);
}

/** Whether step text holds one of the pieces (whitespace and case aside). */
function holdsQuote(step: TraceEvent | undefined, pieces: readonly string[]): boolean {
  if (!step) return false;
  const text = normalise(step.content);
  return pieces.some((piece) => text.includes(piece));
}

/**
 * The step a model's quote puts it at. A model that miscounts names the agent and quotes its words
 * right but gives another index: when the quoted words are not at the named step but are at a step
 * of the named agent, the nearest such step is taken. A quote found at the named step, found
 * nowhere (a paraphrase), or found only in other actors' steps (a tool's output the agent then
 * acted on) leaves the named step as it is. One pass over the steps' text.
 */
export function anchorToQuote(
  steps: readonly TraceEvent[],
  named: number,
  actor: string | undefined,
  evidence: string | undefined,
): number {
  const pieces = evidence ? quotePieces(evidence) : [];
  const who = actor?.trim().toLowerCase();
  if (pieces.length === 0 || who === undefined || holdsQuote(steps[named], pieces)) return named;
  let nearest = named;
  let distance = Infinity;
  steps.forEach((step, i) => {
    if (step.actor?.trim().toLowerCase() !== who || Math.abs(i - named) >= distance) return;
    if (!holdsQuote(step, pieces)) return;
    nearest = i;
    distance = Math.abs(i - named);
  });
  return nearest;
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
  const claimedActor = text(fields.actor ?? fields.agent, 200);
  const rawEvidence = typeof fields.evidence === "string" ? fields.evidence : undefined;
  if (stepIndex !== undefined && steps)
    stepIndex = anchorToQuote(steps, stepIndex, claimedActor, rawEvidence);
  const step = stepIndex !== undefined ? steps?.[stepIndex] : undefined;
  // The trace is the truth about the step: an eventId that is not the step's is replaced.
  const eventId = step?.eventId ?? (steps ? undefined : claimedEventId);
  const actor = claimedActor ?? step?.actor;
  const toolName = text(fields.toolName ?? fields.tool_name ?? fields.tool, 200) ?? step?.toolName;
  const evidence = rawEvidence !== undefined ? squeeze(rawEvidence) : undefined;
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
 * How often a capable model's attribution named the annotated step of a multi-agent run: 7 of 12
 * recorded answers on the Who&When tune split (bench/attribution.ts). A model's own `confidence` is
 * not calibrated (it said 0.4–0.85 for those answers, right or wrong alike), so it is not what is
 * compared.
 */
export const modelAttributionPrecision = 0.58;

/**
 * The attribution a reflection carries: the model's when it gives one, unless the offline rules
 * named another step on a kind of evidence that held, on sources nothing was tuned on, more often
 * than the model has proven. Measured there (calibration.ts), no kind does today: a tool-using
 * agent's first change of state, 0.86 on the runs it was tuned on, named the annotated step of 24 %
 * of held-out retail runs, and a tool's error message is evidence, not the agent at fault.
 */
export function chooseAttribution(
  model: Attribution | undefined,
  offline: Attribution,
  basis: AttributionBasis,
  calibration: AttributionCalibration = defaultCalibration,
  event?: TaskCompleted,
): Attribution {
  if (!model) return offline;
  if (offline.stepIndex === undefined || offline.stepIndex === model.stepIndex) return model;
  // A decisive step is an agent's: a model that blames the task statement, the user's message or
  // the system's text has named no step of the team, and a step the trace reports as failed is.
  const blamed = model.stepIndex === undefined ? undefined : event?.events[model.stepIndex];
  if (blamed && isOutsideTeam(blamed) && reportedBases.has(basis)) return offline;
  return heldOutPrecision(basis, calibration) > modelAttributionPrecision ? offline : model;
}
