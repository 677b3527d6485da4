import { locateFailure } from "../domain/attribution/attribute-failure.js";
import type { TaskCompleted } from "../domain/contracts/index.js";
import { findingFromEvaluation } from "../domain/evaluation/reflection-from-evaluation.js";
import { actionKey } from "../domain/memory/action-key.js";
import { episodeText } from "../domain/memory/trace-text.js";
import { selectForReflection, type ReflectionMode } from "../domain/select-for-reflection.js";
import { computeErrorSignature, signatureCandidates } from "../domain/signature.js";
import type { EventFacts } from "./processing-state.js";

/**
 * Everything the pipeline derives from an event before any store or model is asked, computed
 * once where the record is decoded and carried with it: the consumer orders work by `signature`,
 * the processor files the trace under `candidates`, and the generators read `located` instead of
 * scanning the trace again (a trace may hold hundreds of kilobytes; every scan is linear).
 */
export function eventFacts(event: TaskCompleted, mode: ReflectionMode): EventFacts {
  const selection = selectForReflection(event, mode);
  const reflect = selection.reflect;
  // Attribution reads failures only; a selected success (an evaluator's finding) is located for
  // its generator, a routine success not at all.
  const located = event.outcome !== "success" || reflect ? locateFailure(event) : null;
  const attribution = event.outcome === "success" ? undefined : located?.attribution;
  const stepIndex = attribution?.stepIndex;
  const failingStep = stepIndex === undefined ? undefined : event.events[stepIndex];
  const all = signatureCandidates(event, failingStep);
  const candidates = reflect ? all : [];
  return {
    event,
    selection,
    located,
    attribution: reflect ? attribution : undefined,
    failingStep: reflect ? failingStep : undefined,
    action: reflect ? actionKey(event, failingStep) : null,
    candidates,
    signature: all[0]?.signature ?? computeErrorSignature(event.outcome, event.task.description),
    episode: episodeText(event, reflect ? failingStep : undefined),
    finding: candidates[0]?.source === "evaluation" ? findingFromEvaluation(event) : null,
  };
}
