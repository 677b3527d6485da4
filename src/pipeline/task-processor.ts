import {
  cloudEventTypes,
  type LoopDecision,
  type Reflection,
  type ReflectionOutcome,
  type TaskCompleted,
  type Verdict,
} from "../domain/contracts/index.js";
import { decideLoop } from "../domain/guardrails/decide-loop.js";
import type { GuardrailConfig } from "../domain/guardrails/guardrail-config.js";
import type { QualityConfig } from "../domain/quality/quality-config.js";
import { runImprovementLoop } from "../domain/quality/improvement-loop.js";
import { decideVerdict, shouldStore, type ValidationResult } from "../domain/quality/validate-reflection.js";
import { selectForReflection, type ReflectionMode } from "../domain/select-for-reflection.js";
import type { AnswerEvaluation } from "../domain/evaluation/answer-evaluation.js";
import { insightLines } from "../domain/evaluation/adaptive-insights.js";
import { findingFromEvaluation } from "../domain/evaluation/reflection-from-evaluation.js";
import { computeErrorSignature, signatureInputFor } from "../domain/signature.js";
import { stableId } from "../domain/stable-id.js";
import type {
  AnswerEvaluator,
  Clock,
  Embedder,
  NewReflection,
  OutboundMessage,
  ReflectionGenerator,
  ReflectionStore,
  SignatureIndex,
  StoredReflection,
  UnitOfWork,
} from "./ports.js";
import { createAttemptJudge } from "./judge-reflection.js";
import type { StageTimer } from "./stage-timer.js";
import { decisionMessage } from "./decision-message.js";
import { ReflectorError } from "../domain/errors.js";

/** Re-decisions after a concurrent bias-history change, before the event is retried whole. */
const maxLoopStateRetries = 5;

function toStored(created: NewReflection, signature: string): StoredReflection {
  return {
    id: created.id,
    signature,
    reflection: created.reflection,
    verdict: created.verdict,
    qualityScore: created.qualityScore,
    metrics: created.metrics,
    violations: created.violations,
    generator: created.generator,
    attempts: created.attempts,
    occurrences: 1,
  };
}

/** Receives every judged reflection, for the RT-010 quality metrics. */
export interface QualityObserver {
  observe(judgement: { validation: ValidationResult; verdict: Verdict; attempts: number }): void;
}

export interface TaskProcessorDeps {
  store: ReflectionStore;
  answerEvaluator: AnswerEvaluator;
  observer?: QualityObserver;
  index: SignatureIndex;
  generator: ReflectionGenerator;
  embedder: Embedder;
  clock: Clock;
  timer: StageTimer;
  quality: QualityConfig;
  guardrails: GuardrailConfig;
  mode: ReflectionMode;
}

export type ProcessStatus = "processed" | "replayed" | "duplicate-concurrent";

export interface ProcessResult {
  status: ProcessStatus;
  outputs: OutboundMessage[];
  verdict: Verdict | null;
  decision: LoopDecision["decision"] | null;
  generatorCalls: number;
}

interface Judged {
  reflection: Reflection;
  validation: ValidationResult;
  verdict: Verdict;
  attempts: number;
  embedding: number[];
}

/** What the task was and where it failed: the "task" side of RT-010 relevance. */
function taskText(event: TaskCompleted): string {
  const failures = event.events
    .filter((e) => e.type === "error_event" || e.error)
    .map((e) => [e.toolName, e.error?.message, e.content].filter(Boolean).join(" "));
  return [event.task.description, event.task.goal, event.task.query, event.error?.message, ...failures]
    .filter(Boolean)
    .join("\n");
}

/**
 * One event through the pipeline: idempotency → select → signature → reflect → score →
 * dedupe → decide → persist. Publishing and committing belong to the caller, which owns
 * the Kafka side.
 */
export function createTaskProcessor(deps: TaskProcessorDeps) {
  const { store, index, generator, embedder, clock, timer, quality, guardrails } = deps;

  async function reflect(event: TaskCompleted, answerEvaluation: AnswerEvaluation | null): Promise<Judged> {
    const [taskVector] = await embedder.embed([taskText(event)]);
    if (!taskVector) throw new Error("embedder returned no vector");
    const neighbours = await store.nearbyEmbeddings(event.tenantId, taskText(event), 50);
    const insights = insightLines(await timer.time("store-read", () => store.commonIssues(event.tenantId)));
    const judge = createAttemptJudge({
      taskVector,
      neighbours,
      patternEvidence: (patterns) => store.patternEvidence(event.tenantId, patterns),
      embedder,
      quality,
    });

    const result = await runImprovementLoop({
      maxAttempts: quality.maxAttempts,
      generate: (attempt, feedback) =>
        timer.time("generate", () =>
          generator.generate({
            event,
            attempt,
            violations: feedback?.violations ?? [],
            missingFields: feedback?.missingFields ?? [],
            insights,
            answerEvaluation,
          }),
        ),
      evaluate: judge.evaluate,
    });
    const embedding = judge.embeddingOf(result.reflection);
    const verdict = decideVerdict(result.validation, quality);
    deps.observer?.observe({ validation: result.validation, verdict, attempts: result.attempts });
    return {
      reflection: result.reflection,
      validation: result.validation,
      verdict,
      attempts: result.attempts,
      embedding,
    };
  }

  function outcomeMessage(
    event: TaskCompleted,
    signature: string,
    body: Omit<
      ReflectionOutcome,
      | "schemaVersion"
      | "outcomeId"
      | "sourceEventId"
      | "tenantId"
      | "projectId"
      | "agentId"
      | "loopId"
      | "taskId"
      | "signature"
      | "producedAt"
    >,
    now: Date,
  ): OutboundMessage {
    const outcomeId = stableId("outcome", event.tenantId, event.eventId);
    const value: ReflectionOutcome = {
      schemaVersion: 1,
      outcomeId,
      sourceEventId: event.eventId,
      tenantId: event.tenantId,
      projectId: event.projectId,
      agentId: event.agentId,
      loopId: event.loopId,
      taskId: event.taskId,
      signature,
      producedAt: now.toISOString(),
      ...body,
    };
    return {
      role: body.verdict === "rejected" ? "reflectionRejected" : "reflectionAccepted",
      key: event.loopId,
      id: outcomeId,
      type: cloudEventTypes["reflection-outcome.v1"],
      subject: event.loopId,
      time: value.producedAt,
      value,
    };
  }

  async function findKnown(
    tenantId: string,
    signature: string,
    cached: StoredReflection | null,
  ): Promise<StoredReflection | null> {
    if (cached) return cached;
    const stored = await timer.time("store-read", () => store.findBySignature(tenantId, signature));
    if (stored) await index.remember(tenantId, stored); // Redis was cold or lost: warm it from the truth.
    return stored;
  }

  async function process(event: TaskCompleted): Promise<ProcessResult> {
    const selection = selectForReflection(event, deps.mode);
    const signatureInput = selection.reflect ? signatureInputFor(event) : null;
    const signature = signatureInput
      ? computeErrorSignature(signatureInput.errorType, signatureInput.content)
      : null;
    // The signature is computed first so that the cached reflection comes with the processed
    // check, one Redis round trip for both.
    const recalled = await timer.time("index", () => index.recall(event.tenantId, event.eventId, signature));
    if (recalled.processed) {
      const outputs = await store.findProcessedOutputs(event.tenantId, event.eventId);
      if (outputs) return { status: "replayed", outputs, verdict: null, decision: null, generatorCalls: 0 };
    }

    const now = clock.now();
    // Seed 003: a reflection that rests on the evaluator's finding is kept only if it changed behaviour.
    const finding = signatureInput?.source === "evaluation" ? findingFromEvaluation(event) : null;
    // Seed 001: judging an answer costs what a reflection costs, so it follows the same selection.
    const answerEvaluation = selection.reflect
      ? await timer.time("evaluate-answer", () => deps.answerEvaluator.evaluate(event))
      : null;
    const known = signature ? await findKnown(event.tenantId, signature, recalled.cached) : null;
    const judged = signature && !known ? await reflect(event, answerEvaluation) : null;

    const decide = async () => {
      const loopContext = await timer.time("store-read", () => store.loopContext(event));
      return decideLoop(
        { event, ...loopContext, answerNeedsRetry: answerEvaluation?.shouldRetry ?? false },
        guardrails,
      );
    };
    // Reassigned when the commit finds the loop state changed under the decision (see below).
    let loop = await decide();

    let storeOp: UnitOfWork["store"] = null;
    let newReflection: NewReflection | null = null;
    let notStoredReason: string | null = null;
    if (judged && judged.verdict !== "rejected") {
      if (finding && !finding.changedBehaviour) {
        notStoredReason = `the ${finding.errorType} finding did not change the agent's behaviour (seed 003 stores only reflections that did)`;
      } else if (!shouldStore(judged.verdict, judged.validation.qualityScore, quality)) {
        notStoredReason = `quality ${judged.validation.qualityScore.toFixed(2)} is below the storage minimum ${quality.storageMinQuality}`;
      }
    }
    const evaluationFinding = finding
      ? {
          errorType: finding.errorType,
          qualityDelta: finding.qualityDelta,
          changedBehaviour: finding.changedBehaviour,
        }
      : null;
    if (known) {
      storeOp = { kind: "increment", reflectionId: known.id };
    } else if (judged && signatureInput && signature && judged.verdict !== "rejected" && !notStoredReason) {
      newReflection = {
        id: stableId("reflection", event.tenantId, signature),
        signatureType: signatureInput.errorType,
        reflection: judged.reflection,
        verdict: judged.verdict,
        qualityScore: judged.validation.qualityScore,
        metrics: judged.validation.metrics,
        violations: judged.validation.violations,
        generator: generator.name,
        attempts: judged.attempts,
        embedding: judged.embedding,
      };
      storeOp = { kind: "insert", reflection: newReflection };
    }

    const buildOutputs = (occurrences: number | null): OutboundMessage[] => {
      const outputs: OutboundMessage[] = [];
      if (signature && known) {
        outputs.push(
          outcomeMessage(
            event,
            signature,
            {
              verdict: known.verdict,
              reflectionId: known.id,
              stored: true,
              deduplicated: true,
              occurrences: occurrences ?? known.occurrences + 1,
              metrics: known.metrics,
              qualityScore: known.qualityScore,
              violations: known.violations,
              attempts: 0,
              generator: "reused",
              reflection: known.reflection,
              notStoredReason: null,
              answerEvaluation,
              evaluationFinding,
            },
            now,
          ),
        );
      } else if (signature && judged) {
        outputs.push(
          outcomeMessage(
            event,
            signature,
            {
              verdict: judged.verdict,
              reflectionId: newReflection?.id ?? null,
              stored: newReflection !== null,
              // Another worker may have stored the same signature first: the upsert says so.
              deduplicated: newReflection !== null && occurrences !== null && occurrences > 1,
              occurrences: occurrences ?? 1,
              metrics: judged.validation.metrics,
              qualityScore: judged.validation.qualityScore,
              violations: judged.validation.violations,
              attempts: judged.attempts,
              generator: generator.name,
              reflection: judged.reflection,
              notStoredReason,
              answerEvaluation,
              evaluationFinding,
            },
            now,
          ),
        );
      }
      outputs.push(decisionMessage(event, loop, now));
      return outputs;
    };

    const persist = () =>
      timer.time("persist", () =>
        store.commit(
          {
            event,
            signature,
            store: storeOp,
            loop,
            answerEvaluation,
            judgement: judged
              ? {
                  verdict: judged.verdict,
                  qualityScore: judged.validation.qualityScore,
                  violations: judged.validation.violations,
                  generator: generator.name,
                  attempts: judged.attempts,
                  stored: newReflection !== null,
                }
              : null,
            decidedAt: now,
          },
          buildOutputs,
        ),
      );
    let result = await persist();
    // A concurrent family of the tenant moved the bias history first: decide again, from fresh
    // state, so a bias echo is caught on the event that reaches the threshold.
    for (let retry = 0; result.staleLoopState && retry < maxLoopStateRetries; retry += 1) {
      loop = await decide();
      result = await persist();
    }
    if (result.staleLoopState) {
      throw new ReflectorError(
        "STORE_UNAVAILABLE",
        "loop state kept changing under the decision; retrying the event",
      );
    }

    // Refresh the cache only after the transaction that made it true has committed.
    const remembered = known ?? (newReflection && signature ? toStored(newReflection, signature) : null);
    const occurrences = result.occurrences;
    const refreshed = remembered && occurrences !== null ? { ...remembered, occurrences } : null;
    await timer.time("index", () => index.markProcessed(event.tenantId, event.eventId, refreshed));

    return {
      status: result.committed ? "processed" : "duplicate-concurrent",
      outputs: result.outputs,
      verdict: judged?.verdict ?? known?.verdict ?? null,
      decision: loop.decision,
      generatorCalls: judged?.attempts ?? 0,
    };
  }

  return { process };
}

export type TaskProcessor = ReturnType<typeof createTaskProcessor>;
