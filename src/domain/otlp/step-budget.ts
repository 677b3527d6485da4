import { cutMiddle } from "../contracts/cut-text.js";
import type { OtlpSpan } from "./otlp-span.js";
import type { Step } from "./span-steps.js";
import { isoOf } from "./span-values.js";

/** How much of a trace the event carries: the steps kept, their texts' budget, the event's bytes. */

/** The contract's bound on trace steps; a longer trace keeps its first steps and says how many were left out. */
export const maxEvents = 2_000;
/** Text of all steps together, before the event is measured in bytes (`maxEventBytes`). */
const stepTextBudgetChars = 400_000;
/** Texts are cut to at most this fraction of their usual length before steps are left out. */
export const smallestTextScale = 1 / 64;
const minStepChars = 500;
const maxStepChars = 8_000;

/**
 * The UTF-8 length of `value`'s JSON, as the producer will encode it (a lone surrogate as U+FFFD);
 * when even three bytes a character would fit `maxBytes`, its character count (a lower bound that
 * cannot change the verdict) without reading every character.
 */
export function jsonBytes(value: unknown, maxBytes: number): number {
  const text = JSON.stringify(value);
  if (text.length * 3 <= maxBytes) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * The steps as the event carries them: at most `keep` (a longer trace keeps its first steps and one
 * saying how many were left out), their texts sharing a budget scaled by `scale`.
 */
export function stepsWithin(all: readonly Step[], root: OtlpSpan, scale: number, keep: number): Step[] {
  const limit = Math.min(maxEvents, keep);
  const kept = all.length > limit ? all.slice(0, limit - 1) : all;
  const stepChars = Math.ceil(
    scale *
      Math.max(
        minStepChars,
        Math.min(maxStepChars, Math.floor(stepTextBudgetChars / Math.max(1, Math.min(limit, all.length)))),
      ),
  );
  const steps = kept.map((step) => ({
    ...step,
    content: cutMiddle(step.content, stepChars),
    ...(step.error?.message !== undefined
      ? { error: { ...step.error, message: cutMiddle(step.error.message, stepChars) } }
      : {}),
  }));
  if (all.length > limit) {
    const left = all.length - kept.length;
    steps.push({
      type: "system_event",
      eventId: "otlp.steps-left-out",
      timestamp: kept.at(-1)?.timestamp ?? isoOf(root.endTimeUnixNano),
      content:
        limit === maxEvents
          ? `${String(left)} more steps of this trace were left out (the contract keeps ${String(maxEvents)})`
          : `${String(left)} more steps of this trace were left out (the event's size limit)`,
    });
  }
  return steps;
}
