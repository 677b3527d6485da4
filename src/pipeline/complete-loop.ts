import type { LoopDecision, Outcome, TaskCompleted } from "../domain/contracts/index.js";
import type { GuardrailConfig } from "../domain/guardrails/guardrail-config.js";
import { stableId } from "../domain/stable-id.js";
import { decisionMessage, decisionValue } from "./decision-message.js";
import { failingStepOf } from "../domain/memory/failing-step.js";
import { episodeText } from "../domain/memory/trace-text.js";
import type { Clock, OutboundMessage, ReflectionStore } from "./ports.js";
import { decideAndCommit } from "./stages/decide-and-commit.js";

/** `POST /orchestrator/loop-complete`, in the processor's own terms. */
export interface LoopCompletion {
  tenantId: string;
  projectId: string;
  loopId: string;
  rerunOf?: string | undefined;
  outcome: Outcome;
  alignment?: number | undefined;
  drift?: number | undefined;
  biasTags: string[];
  orchestratorPersona?: string | undefined;
  reflectionPersona?: string | undefined;
  taskDescription?: string | undefined;
  /** Idempotency key; defaults to one per (tenant, loop), so a retried call does not count twice. */
  eventId?: string | undefined;
}

export interface LoopCompletionResult {
  /** False when this completion had already been decided: the stored decision is returned. */
  committed: boolean;
  decision: LoopDecision;
}

export interface CompleteLoopDeps {
  store: Pick<ReflectionStore, "loopContext" | "commit">;
  guardrails: GuardrailConfig;
  clock: Clock;
  /** Publishes the decision on `loop.decision`, as the Kafka path does (again on a replayed call). */
  publish?: (outputs: OutboundMessage[]) => Promise<void>;
}

/**
 * A loop completion reported over HTTP goes through the same `decideLoop` and the same Postgres
 * loop state (`loopContext` / `commit`) as an `agent.task.completed` event, so both paths agree on
 * rerun counts, fatigue, bias history and overrides, decided and committed by the same step
 * (`decideAndCommit`, with its retry bound). No reflection is generated here.
 */
export function createLoopCompleter(deps: CompleteLoopDeps) {
  return async function completeLoop(input: LoopCompletion): Promise<LoopCompletionResult> {
    const now = deps.clock.now();
    const scores =
      input.alignment !== undefined || input.drift !== undefined
        ? {
            ...(input.alignment !== undefined ? { alignment: input.alignment } : {}),
            ...(input.drift !== undefined ? { drift: input.drift } : {}),
          }
        : undefined;
    const event: TaskCompleted = {
      schemaVersion: 1,
      eventId: input.eventId ?? stableId("http-loop-complete", input.tenantId, input.loopId),
      tenantId: input.tenantId,
      projectId: input.projectId,
      agentId: "orchestrator-http",
      taskId: input.loopId,
      loopId: input.loopId,
      ...(input.rerunOf !== undefined ? { rerunOf: input.rerunOf } : {}),
      occurredAt: now.toISOString(),
      task: { description: input.taskDescription ?? `loop ${input.loopId} completed` },
      outcome: input.outcome,
      events: [],
      ...(scores ? { scores } : {}),
      biasTags: input.biasTags.map((tag) => ({ tag })),
      persona: {
        ...(input.orchestratorPersona !== undefined ? { orchestrator: input.orchestratorPersona } : {}),
        ...(input.reflectionPersona !== undefined ? { reflection: input.reflectionPersona } : {}),
      },
    };
    const episode = episodeText(event, failingStepOf(event));
    const { loop, result } = await decideAndCommit(deps, {
      event,
      answerNeedsRetry: false,
      unitOf: (loop) => ({
        event,
        signature: null,
        store: null,
        loop,
        answerEvaluation: null,
        episode,
        judgement: null,
        decidedAt: now,
        sourceRecord: null,
      }),
      outputsOf: (loop) => [decisionMessage(event, loop, now)],
    });
    const stored = result.outputs.find((o) => o.role === "loopDecision");
    // A replayed call publishes the stored decision again: the call that saved it may have failed
    // before its publish was acknowledged, and the caller's retry is the only one left to send it.
    // Same CloudEvents id each time, so consumers drop the copy (at-least-once, as documented).
    if (deps.publish) await deps.publish(result.outputs);
    return {
      committed: result.committed,
      decision: (stored?.value as LoopDecision | undefined) ?? decisionValue(event, loop, now),
    };
  };
}

export type LoopCompleter = ReturnType<typeof createLoopCompleter>;
