import { decisionMessage, lessonsOfMemory } from "../decision-message.js";
import { outcomeBody, outcomeMessage } from "../outcome-message.js";
import type { OutboundMessage, ReflectionGenerator, UnitOfWork } from "../ports.js";
import type { PersistedState, RememberedState } from "../processing-state.js";
import type { StageTimer } from "../stage-timer.js";
import { decideAndCommit, type DecideAndCommitDeps } from "./decide-and-commit.js";

export interface DecideAndPersistDeps extends DecideAndCommitDeps {
  timer: StageTimer;
  /** The configured generator: named on a recalled lesson's outcome. */
  generator: Pick<ReflectionGenerator, "name">;
}

/**
 * Stage "decide and persist": the loop decision and everything the event changes, in one commit
 * with the outputs built from what it returned (`decideAndCommit`, which decides again when the
 * bias history moved under the decision).
 */
export async function decideAndPersist(
  deps: DecideAndPersistDeps,
  state: RememberedState,
): Promise<PersistedState> {
  const { facts, memory, answerEvaluation, now, sourceRecord } = state;
  const { event } = facts;
  const judged = memory?.judged ?? null;
  const signature = memory?.matched.candidate.signature ?? null;
  const unitOf = (loop: UnitOfWork["loop"]): UnitOfWork => ({
    event,
    signature,
    store: memory?.op ?? null,
    loop,
    answerEvaluation,
    episode: facts.episode,
    judgement: judged
      ? {
          verdict: judged.verdict,
          qualityScore: judged.validation.qualityScore,
          violations: judged.validation.violations,
          generator: judged.generator,
          attempts: judged.attempts,
          stored: memory?.op != null,
        }
      : null,
    decidedAt: now,
    sourceRecord,
  });
  const outputsOf = (loop: UnitOfWork["loop"]): OutboundMessage[] => [
    ...(memory
      ? [
          outcomeMessage(
            event,
            memory.matched.candidate.signature,
            outcomeBody(memory, {
              facts,
              answerEvaluation,
              generator: judged?.generator ?? deps.generator.name,
            }),
            now,
          ),
        ]
      : []),
    decisionMessage(event, loop, now, lessonsOfMemory(memory)),
  ];
  const { loop, result } = await decideAndCommit(deps, {
    event,
    answerNeedsRetry: answerEvaluation?.shouldRetry ?? false,
    prefetched: state.loopContext,
    unitOf,
    outputsOf,
    describe: (loop) => ({
      attributes: {
        "reflector.signature": signature ?? undefined,
        "reflector.verdict": judged?.verdict,
        "reflector.decision": loop.decision,
      },
      outcome: (r) => ({ "reflector.committed": r.committed }),
    }),
  });
  return { ...state, loop, result };
}
