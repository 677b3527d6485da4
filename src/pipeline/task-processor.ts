import {
  cloudEventTypes,
  type LoopDecision,
  type Reflection,
  type ReflectionOutcome,
  type TaskCompleted,
  type Verdict,
} from "../domain/contracts/index.js";
import { decideLoop, type LoopDecisionResult } from "../domain/guardrails/decide-loop.js";
import type { GuardrailConfig } from "../domain/guardrails/guardrail-config.js";
import type { QualityConfig } from "../domain/quality/quality-config.js";
import { runImprovementLoop } from "../domain/quality/improvement-loop.js";
import {
  decideVerdict,
  shouldStore,
  validateReflection,
  type ValidationResult,
} from "../domain/quality/validate-reflection.js";
import { cosineSimilarity } from "../domain/embedding/hashing-embedding.js";
import { selectForReflection, type ReflectionMode } from "../domain/select-for-reflection.js";
import { signatureFor, signatureInputFor } from "../domain/signature.js";
import { stableId } from "../domain/stable-id.js";
import type {
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
import type { StageTimer } from "./stage-timer.js";

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

export interface TaskProcessorDeps {
  store: ReflectionStore;
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

function reflectionBody(reflection: Reflection): string {
  return [reflection.reflectionText, reflection.strategyText, reflection.learning].filter(Boolean).join("\n");
}

/**
 * One event through the pipeline: idempotency → select → signature → reflect → score →
 * dedupe → decide → persist. Publishing and committing belong to the caller, which owns
 * the Kafka side.
 */
export function createTaskProcessor(deps: TaskProcessorDeps) {
  const { store, index, generator, embedder, clock, timer, quality, guardrails } = deps;

  async function reflect(event: TaskCompleted): Promise<Judged> {
    const [taskVector] = await embedder.embed([taskText(event)]);
    if (!taskVector) throw new Error("embedder returned no vector");
    const neighbours = await store.nearbyEmbeddings(event.tenantId, taskText(event), 50);
    const embeddings = new Map<Reflection, number[]>();

    const result = await runImprovementLoop({
      maxAttempts: quality.maxAttempts,
      generate: (attempt, feedback) =>
        timer.time("generate", () =>
          generator.generate({
            event,
            attempt,
            violations: feedback?.violations ?? [],
            missingFields: feedback?.missingFields ?? [],
            insights: [],
          }),
        ),
      evaluate: async (reflection) => {
        // Relevance compares the analysis (the root cause) with the task; novelty and storage use the
        // whole reflection, lesson included.
        const [vector, analysisVector] = await embedder.embed([
          reflectionBody(reflection),
          reflection.reflectionText,
        ]);
        if (!vector || !analysisVector) throw new Error("embedder returned no vector");
        embeddings.set(reflection, vector);
        const patternEvidence = await store.patternEvidence(event.tenantId, reflection.patterns);
        const relevance = Math.max(0, cosineSimilarity(analysisVector, taskVector));
        const maxSimilarity = neighbours.reduce(
          (max, other) => Math.max(max, cosineSimilarity(vector, other)),
          0,
        );
        return validateReflection(
          reflection,
          { patternEvidence, relevance, novelty: 1 - maxSimilarity },
          quality,
        );
      },
    });
    const embedding = embeddings.get(result.reflection);
    if (!embedding) throw new Error("best attempt was never evaluated");
    return {
      reflection: result.reflection,
      validation: result.validation,
      verdict: decideVerdict(result.validation, quality),
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

  function decisionMessage(event: TaskCompleted, loop: LoopDecisionResult, now: Date): OutboundMessage {
    const decisionId = stableId("decision", event.tenantId, event.eventId);
    const value: LoopDecision = {
      schemaVersion: 1,
      decisionId,
      sourceEventId: event.eventId,
      tenantId: event.tenantId,
      projectId: event.projectId,
      loopId: event.loopId,
      rootLoopId: loop.rootLoopId,
      decision: loop.decision,
      newLoopId: loop.newLoopId,
      rerunCount: loop.rerunCount,
      maxReruns: loop.maxReruns,
      reason: loop.reason,
      reasonDetail: loop.reasonDetail,
      triggers: loop.triggers,
      fatigue: loop.fatigue,
      fatigueIncreased: loop.fatigueIncreased,
      biasEcho: loop.biasEcho,
      repeatedTags: loop.repeatedTags,
      forceFinalize: loop.forceFinalize,
      overriddenBy: loop.overriddenBy,
      alignment: loop.alignment,
      drift: loop.drift,
      decidedAt: now.toISOString(),
    };
    return {
      role: "loopDecision",
      key: event.loopId,
      id: decisionId,
      type: cloudEventTypes["loop-decision.v1"],
      subject: event.loopId,
      time: value.decidedAt,
      value,
    };
  }

  async function findKnown(tenantId: string, signature: string): Promise<StoredReflection | null> {
    const cached = await timer.time("index", () => index.lookup(tenantId, signature));
    if (cached) return cached;
    const stored = await timer.time("store-read", () => store.findBySignature(tenantId, signature));
    if (stored) await index.remember(tenantId, stored); // Redis was cold or lost: warm it from the truth.
    return stored;
  }

  async function process(event: TaskCompleted): Promise<ProcessResult> {
    if (await timer.time("index", () => index.wasProcessed(event.tenantId, event.eventId))) {
      const outputs = await store.findProcessedOutputs(event.tenantId, event.eventId);
      if (outputs) return { status: "replayed", outputs, verdict: null, decision: null, generatorCalls: 0 };
    }

    const now = clock.now();
    const selection = selectForReflection(event, deps.mode);
    const signature = selection.reflect ? signatureFor(event) : null;
    const known = signature ? await findKnown(event.tenantId, signature) : null;
    const judged = signature && !known ? await reflect(event) : null;

    const loopContext = await timer.time("store-read", () => store.loopContext(event));
    const loop = decideLoop({ event, ...loopContext, answerNeedsRetry: false }, guardrails);

    let storeOp: UnitOfWork["store"] = null;
    let newReflection: NewReflection | null = null;
    if (known) {
      storeOp = { kind: "increment", reflectionId: known.id };
    } else if (
      judged &&
      signature &&
      judged.verdict !== "rejected" &&
      shouldStore(judged.verdict, judged.validation.qualityScore, quality)
    ) {
      newReflection = {
        id: stableId("reflection", event.tenantId, signature),
        signatureType: signatureInputFor(event).errorType,
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
            },
            now,
          ),
        );
      }
      outputs.push(decisionMessage(event, loop, now));
      return outputs;
    };

    const result = await timer.time("persist", () =>
      store.commit({ event, signature, store: storeOp, loop, decidedAt: now }, buildOutputs),
    );

    // Refresh the cache only after the transaction that made it true has committed.
    const remembered = known ?? (newReflection && signature ? toStored(newReflection, signature) : null);
    if (remembered && result.occurrences !== null) {
      await timer.time("index", () =>
        index.remember(event.tenantId, {
          ...remembered,
          occurrences: result.occurrences ?? remembered.occurrences,
        }),
      );
    }
    await timer.time("index", () => index.markProcessed(event.tenantId, event.eventId));

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
