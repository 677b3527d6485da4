import { withEpisode, withRecurrences } from "../../domain/quality/pattern-validity.js";
import type { QualityConfig } from "../../domain/quality/quality-config.js";
import {
  decideVerdict,
  isPatternViolation,
  validateReflection,
} from "../../domain/quality/validate-reflection.js";
import type { ReflectionStore, Rejudgement, StoredReflection } from "../ports.js";
import type { EventFacts, MatchedState, RejudgedState } from "../processing-state.js";
import type { StageTimer } from "../stage-timer.js";

export interface RejudgeDeps {
  store: Pick<ReflectionStore, "patternEvidence">;
  timer: StageTimer;
  quality: QualityConfig;
}

/**
 * Stage "rejudge": a recalled lesson judged again when pattern evidence may have accrued. Null
 * when there is nothing to judge again (a new lesson, an accepted one) or the judgement stands.
 */
export async function rejudge(deps: RejudgeDeps, state: MatchedState): Promise<RejudgedState> {
  const known = state.matched.known;
  const rejudged = known ? await judgeAgain(deps, state.facts, known) : null;
  return { ...state, rejudged };
}

async function judgeAgain(
  deps: RejudgeDeps,
  facts: EventFacts,
  known: StoredReflection,
): Promise<Rejudgement | null> {
  const { store, timer, quality } = deps;
  const patterns = known.reflection.patterns;
  // Only pattern validity depends on evidence that accrues; the other metrics stay as judged.
  const unproven = known.violations.some(isPatternViolation);
  if (known.verdict === "accepted" || patterns.length === 0 || !unproven) return null;
  const stored = await timer.time("store-read", () => store.patternEvidence(facts.event.tenantId, patterns));
  const evidence = withRecurrences(
    withEpisode(stored, patterns, facts.episode, quality.patternValidity.keywordMatchShare),
    known.occurrences + 1,
    quality.patternValidity.minOccurrences,
  );
  const validation = validateReflection(
    known.reflection,
    {
      patternEvidence: evidence,
      relevance: known.metrics.relevanceScore,
      novelty: known.metrics.noveltyScore,
      judged: {
        depthScore: known.metrics.depthScore,
        actionabilityScore: known.metrics.actionabilityScore,
      },
    },
    quality,
  );
  const verdict = decideVerdict(validation, quality);
  if (verdict === "rejected") return null; // pattern evidence does not enter the score: cannot happen
  const same =
    verdict === known.verdict &&
    validation.violations.length === known.violations.length &&
    validation.violations.every((v, i) => v === known.violations[i]);
  return same
    ? null
    : {
        verdict,
        qualityScore: validation.qualityScore,
        metrics: validation.metrics,
        violations: validation.violations,
      };
}
