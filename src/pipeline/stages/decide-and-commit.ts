import type { TaskCompleted } from "../../domain/contracts/index.js";
import { ReflectorError } from "../../domain/errors.js";
import { decideLoop, type LoopDecisionResult } from "../../domain/guardrails/decide-loop.js";
import type { GuardrailConfig } from "../../domain/guardrails/guardrail-config.js";
import type { CommitResult, LoopContext, OutboundMessage, ReflectionStore, UnitOfWork } from "../ports.js";
import { withOccurrences } from "../outcome-message.js";
import { untimed, type StageDescription, type StageTimer } from "../stage-timer.js";

/**
 * Loop decisions one commit may take before the work is given up as retryable: each further one
 * follows a commit refused because another family of the tenant moved the bias history first.
 */
export const maxLoopDecisions = 6;

export interface DecideAndCommitDeps {
  store: Pick<ReflectionStore, "loopContext" | "commit">;
  guardrails: GuardrailConfig;
  timer?: StageTimer;
}

/** What is decided and committed: the same for an event from Kafka and a loop completed over HTTP. */
export interface DecisionRequest {
  event: TaskCompleted;
  /** The self-evaluation of the agent's answer asks for a rerun. */
  answerNeedsRetry: boolean;
  /** The loop context already read for the first decision; every later one reads it afresh. */
  prefetched?: Promise<LoopContext>;
  /** Everything the event changes, for a decision. */
  unitOf: (loop: LoopDecisionResult) => UnitOfWork;
  /** The outputs of a decision, before the commit counts (`withOccurrences` applies the count). */
  outputsOf: (loop: LoopDecisionResult) => OutboundMessage[];
  /** The commit's span attributes. */
  describe?: (loop: LoopDecisionResult) => StageDescription<CommitResult>;
}

export interface Committed {
  loop: LoopDecisionResult;
  result: CommitResult;
}

/**
 * Decides the loop and commits the decision with everything the event changes, in one
 * transaction. A concurrent family of the tenant may move the bias history between the read and
 * the commit: the commit then writes nothing, and the loop is decided again from fresh state (so
 * a bias echo is caught on the event that reaches the threshold), at most `maxLoopDecisions` times.
 */
export async function decideAndCommit(
  deps: DecideAndCommitDeps,
  request: DecisionRequest,
): Promise<Committed> {
  const { store, guardrails } = deps;
  const timer = deps.timer ?? untimed;
  const { event } = request;
  for (let attempt = 0; attempt < maxLoopDecisions; attempt += 1) {
    const context =
      attempt === 0 && request.prefetched
        ? await request.prefetched
        : await timer.time("store-read", () => store.loopContext(event));
    const loop = decideLoop({ event, ...context, answerNeedsRetry: request.answerNeedsRetry }, guardrails);
    const result = await timer.time(
      "persist",
      () => store.commit(request.unitOf(loop), request.outputsOf(loop)),
      request.describe?.(loop),
    );
    // What is published: the stored outputs with the count the commit stored beside them.
    if (!result.staleLoopState)
      return { loop, result: { ...result, outputs: withOccurrences(result.outputs, result.occurrences) } };
  }
  throw new ReflectorError(
    "STORE_UNAVAILABLE",
    `loop state kept changing under the decision (${String(maxLoopDecisions)} decisions)`,
  );
}
