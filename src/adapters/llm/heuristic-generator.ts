import { callChecksWith, type HeuristicPackName } from "../../domain/heuristic/packs/heuristic-packs.js";
import { generateHeuristicReflection } from "../../domain/heuristic/generate-heuristic-reflection.js";
import type { ReflectionGenerator } from "../../pipeline/ports.js";

/**
 * The offline generator: deterministic rules over the trace, no model. Its outputs are always
 * labelled `generator: "heuristic"` so nobody mistakes them for an LLM's. Domain packs
 * (`REFLECTOR_HEURISTIC_PACKS`) add their checks of a state-changing call before the general ones.
 */
export function createHeuristicGenerator(packs: readonly HeuristicPackName[] = []): ReflectionGenerator {
  const callChecks = callChecksWith(packs);
  return {
    name: "heuristic",
    generate: (request) =>
      Promise.resolve(
        generateHeuristicReflection(request.event, {
          attempt: request.attempt,
          violations: request.violations,
          missingFields: request.missingFields,
          insights: request.insights,
          answerIssues: request.answerEvaluation?.issues ?? [],
          located: request.located,
          callChecks,
        }),
      ),
  };
}
