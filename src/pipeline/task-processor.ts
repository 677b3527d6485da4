import type {
  Attribution,
  LoopDecision,
  Reflection,
  TaskCompleted,
  TraceEvent,
  Verdict,
} from "../domain/contracts/index.js";
import { cosineSimilarity } from "../domain/embedding/hashing-embedding.js";
import type { AnswerEvaluation } from "../domain/evaluation/answer-evaluation.js";
import { insightLines } from "../domain/evaluation/adaptive-insights.js";
import { findingFromEvaluation } from "../domain/evaluation/reflection-from-evaluation.js";
import { ReflectorError } from "../domain/errors.js";
import { decideLoop } from "../domain/guardrails/decide-loop.js";
import type { GuardrailConfig } from "../domain/guardrails/guardrail-config.js";
import { decideStorage, type StorageDecision } from "../domain/memory/decide-storage.js";
import { attributeFailure } from "../domain/attribution/attribute-failure.js";
import { defaultMemoryConfig, type MemoryConfig } from "../domain/memory/memory-config.js";
import { episodeText, taskText, traceText } from "../domain/memory/trace-text.js";
import { runImprovementLoop } from "../domain/quality/improvement-loop.js";
import { withEpisode } from "../domain/quality/pattern-validity.js";
import type { QualityConfig } from "../domain/quality/quality-config.js";
import {
  decideVerdict,
  validateReflection,
  type ValidationResult,
} from "../domain/quality/validate-reflection.js";
import { selectForReflection, type ReflectionMode } from "../domain/select-for-reflection.js";
import { signatureCandidates, type SignatureCandidate } from "../domain/signature.js";
import { stableId } from "../domain/stable-id.js";
import { decisionMessage } from "./decision-message.js";
import { createAttemptJudge } from "./judge-reflection.js";
import { outcomeMessage } from "./outcome-message.js";
import type {
  AnswerEvaluator,
  Clock,
  Embedder,
  NewReflection,
  OutboundMessage,
  Rejudgement,
  ReflectionGenerator,
  ReflectionStore,
  SignatureIndex,
  StoredReflection,
  UnitOfWork,
} from "./ports.js";
import type { StageTimer } from "./stage-timer.js";

/** Re-decisions after a concurrent bias-history change, before the event is retried whole. */
const maxLoopStateRetries = 5;

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
  memory?: MemoryConfig;
}

export type ProcessStatus = "processed" | "replayed" | "duplicate-concurrent";

export interface ProcessResult {
  status: ProcessStatus;
  outputs: OutboundMessage[];
  verdict: Verdict | null;
  decision: LoopDecision["decision"] | null;
  generatorCalls: number;
}

/** A newly generated reflection, judged, with what memory does with it. */
interface Judged {
  reflection: Reflection;
  validation: ValidationResult;
  verdict: Verdict;
  attempts: number;
  embedding: number[];
  storage: StorageDecision;
}

/** The lesson a trace is filed under: a stored one that fits it, or a signature for a new one. */
interface Match {
  candidate: SignatureCandidate;
  /** The stored lesson that fits the trace; null when the trace needs a reflection of its own. */
  known: StoredReflection | null;
  similarity: number | null;
}

/** Everything about the event that is known before any store or model is asked. */
interface EventFacts {
  event: TaskCompleted;
  /** Where the trace went wrong and who did it, read offline (failures only). */
  attribution: Attribution | undefined;
  failingStep: TraceEvent | undefined;
  candidates: SignatureCandidate[];
  episode: string;
  /** Seed 003: the agent's own evaluator finding, when the signature rests on it. */
  finding: ReturnType<typeof findingFromEvaluation>;
}

/**
 * One event through the pipeline: idempotency → select → signature → match a stored lesson →
 * reflect and judge (or judge the recalled lesson again) → decide storage → decide the loop →
 * persist. Publishing and committing belong to the caller, which owns the Kafka side.
 */
export function createTaskProcessor(deps: TaskProcessorDeps) {
  const { store, index, generator, embedder, clock, timer, quality, guardrails } = deps;
  const memory = deps.memory ?? defaultMemoryConfig;

  function factsOf(event: TaskCompleted): EventFacts {
    const reflect = selectForReflection(event, deps.mode).reflect;
    const attribution = reflect ? attributeFailure(event) : undefined;
    const index = attribution?.stepIndex;
    const failingStep = index === undefined ? undefined : event.events[index];
    const candidates = reflect ? signatureCandidates(event, failingStep) : [];
    const finding = candidates[0]?.source === "evaluation" ? findingFromEvaluation(event) : null;
    return { event, attribution, failingStep, candidates, episode: episodeText(event, failingStep), finding };
  }

  async function lookUp(tenantId: string, signature: string): Promise<StoredReflection | null> {
    const cached = await timer.time("index", () => index.cached(tenantId, signature));
    if (cached) return cached;
    const stored = await timer.time("store-read", () => store.findBySignature(tenantId, signature));
    // Redis was cold or lost: warm it from the truth, under the signature it was found by.
    if (stored) await index.remember(tenantId, { ...stored, signature });
    return stored;
  }

  /**
   * Stage "match": the first signature whose stored lesson fits the trace (reuse), or the first
   * one with no lesson yet (a new reflection). A lesson fits when the trace is close to the trace
   * it was written for; one that does not fit sends the trace to a more specific signature.
   */
  async function match(facts: EventFacts, firstCached: StoredReflection | null, traceVector: number[]) {
    const { event, candidates } = facts;
    let last: Match | null = null;
    for (const [i, candidate] of candidates.entries()) {
      const known = i === 0 && firstCached ? firstCached : await lookUp(event.tenantId, candidate.signature);
      if (!known) return { candidate, known: null, similarity: null } satisfies Match;
      const source = known.sourceVector;
      const similarity = source?.length === traceVector.length ? cosineSimilarity(traceVector, source) : null;
      last = { candidate, known, similarity };
      if (similarity !== null && similarity >= memory.reuseMinSimilarity) return last;
    }
    // Even the task-level signature is taken: the same task failing at the same step again.
    return last;
  }

  /** Stage "rejudge": a recalled lesson judged again when pattern evidence may have accrued. */
  async function rejudge(facts: EventFacts, known: StoredReflection): Promise<Rejudgement | null> {
    const patterns = known.reflection.patterns;
    if (known.verdict === "accepted" || patterns.length === 0) return null;
    const stored = await timer.time("store-read", () =>
      store.patternEvidence(facts.event.tenantId, patterns),
    );
    const evidence = withEpisode(stored, patterns, facts.episode, quality.patternValidity.keywordMatchShare);
    const validation = validateReflection(
      known.reflection,
      {
        patternEvidence: evidence,
        relevance: known.metrics.relevanceScore,
        novelty: known.metrics.noveltyScore,
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

  /** Stage "reflect": generate, judge and improve a reflection, then decide what memory keeps. */
  async function reflect(
    facts: EventFacts,
    taskVector: number[],
    answerEvaluation: AnswerEvaluation | null,
  ): Promise<Judged> {
    const { event } = facts;
    const [neighbours, issues] = await timer.time("store-read", () =>
      Promise.all([
        store.nearbyReflections(event.tenantId, taskText(event, facts.failingStep), 50),
        store.commonIssues(event.tenantId),
      ]),
    );
    const insights = insightLines(issues);
    const judge = createAttemptJudge({
      taskVector,
      neighbours,
      patternEvidence: async (patterns) =>
        withEpisode(
          await store.patternEvidence(event.tenantId, patterns),
          patterns,
          facts.episode,
          quality.patternValidity.keywordMatchShare,
        ),
      embedder,
      quality,
      sameLessonSimilarity: memory.mergeMinSimilarity,
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
    const judgement = judge.judgementOf(result.reflection);
    const verdict = decideVerdict(result.validation, quality);
    deps.observer?.observe({ validation: result.validation, verdict, attempts: result.attempts });
    const nearestId = judgement.nearest?.id;
    const nearest =
      judgement.nearest && nearestId
        ? {
            id: nearestId,
            similarity: judgement.nearest.similarity,
            qualityScore: neighbours.find((n) => n.id === nearestId)?.qualityScore ?? 1,
          }
        : null;
    const storage = decideStorage(
      {
        verdict,
        qualityScore: result.validation.qualityScore,
        metrics: result.validation.metrics,
        missingFields: result.validation.missingFields,
        finding: facts.finding,
        nearest,
      },
      quality,
      memory,
    );
    return {
      reflection: result.reflection,
      validation: result.validation,
      verdict,
      attempts: result.attempts,
      embedding: judgement.embedding,
      storage,
    };
  }

  /** The write a judged or recalled lesson makes, as the store takes it. */
  function storeOperation(
    facts: EventFacts,
    matched: Match,
    traceVector: number[],
    judged: Judged | null,
    rejudged: Rejudgement | null,
  ): { op: UnitOfWork["store"]; created: NewReflection | null } {
    if (matched.known)
      return { op: { kind: "increment", reflectionId: matched.known.id, rejudged }, created: null };
    if (!judged || judged.verdict === "rejected" || judged.storage.action === "none")
      return { op: null, created: null };
    const created: NewReflection = {
      id: stableId("reflection", facts.event.tenantId, matched.candidate.signature),
      signatureType: matched.candidate.errorType,
      reflection: judged.reflection,
      verdict: judged.verdict,
      qualityScore: judged.validation.qualityScore,
      metrics: judged.validation.metrics,
      violations: judged.validation.violations,
      generator: generator.name,
      attempts: judged.attempts,
      embedding: judged.embedding,
      sourceVector: traceVector,
    };
    if (judged.storage.action === "add") return { op: { kind: "insert", reflection: created }, created };
    return {
      op: {
        kind: "merge",
        reflectionId: judged.storage.into,
        signature: matched.candidate.signature,
        sourceVector: traceVector,
        replacement: judged.storage.action === "update" ? created : null,
      },
      created: null,
    };
  }

  async function process(event: TaskCompleted): Promise<ProcessResult> {
    const facts = factsOf(event);
    const first = facts.candidates[0];
    // The first signature's cached lesson comes with the processed check: one Redis round trip.
    const recalled = await timer.time("index", () =>
      index.recall(event.tenantId, event.eventId, first?.signature ?? null),
    );
    if (recalled.processed) {
      const outputs = await store.findProcessedOutputs(event.tenantId, event.eventId);
      if (outputs) return { status: "replayed", outputs, verdict: null, decision: null, generatorCalls: 0 };
    }

    const now = clock.now();
    // Seed 001: judging an answer costs what a reflection costs, so it follows the same selection.
    const answerEvaluation = first
      ? await timer.time("evaluate-answer", () => deps.answerEvaluator.evaluate(event))
      : null;
    // The trace (for matching) and the task (for relevance) are embedded in one batch.
    const vectors = first
      ? await timer.time("embed", () =>
          embedder.embed([traceText(event, facts.failingStep), taskText(event, facts.failingStep)]),
        )
      : [];
    const [traceVector, taskVector] = vectors;
    if (first && (!traceVector || !taskVector)) throw new Error("embedder returned no vector");
    const matched = first && traceVector ? await match(facts, recalled.cached, traceVector) : null;
    const rejudged = matched?.known ? await rejudge(facts, matched.known) : null;
    const judged =
      matched && !matched.known && taskVector ? await reflect(facts, taskVector, answerEvaluation) : null;
    const { op, created } =
      matched && traceVector
        ? storeOperation(facts, matched, traceVector, judged, rejudged)
        : { op: null, created: null };

    const decide = async () => {
      const loopContext = await timer.time("store-read", () => store.loopContext(event));
      return decideLoop(
        { event, ...loopContext, answerNeedsRetry: answerEvaluation?.shouldRetry ?? false },
        guardrails,
      );
    };
    let loop = await decide();

    const evaluationFinding = facts.finding
      ? {
          errorType: facts.finding.errorType,
          qualityDelta: facts.finding.qualityDelta,
          changedBehaviour: facts.finding.changedBehaviour,
        }
      : null;
    const buildOutputs = (occurrences: number | null): OutboundMessage[] => {
      const outputs: OutboundMessage[] = [];
      const signatureLevel = matched?.candidate.level ?? "message";
      const known = matched?.known;
      if (matched && known) {
        outputs.push(
          outcomeMessage(
            event,
            matched.candidate.signature,
            {
              verdict: rejudged?.verdict ?? known.verdict,
              reflectionId: known.id,
              stored: true,
              deduplicated: true,
              occurrences: occurrences ?? known.occurrences + 1,
              metrics: rejudged?.metrics ?? known.metrics,
              qualityScore: rejudged?.qualityScore ?? known.qualityScore,
              violations: rejudged?.violations ?? known.violations,
              attempts: 0,
              generator: "reused",
              // The lesson is the stored one; where this trace went wrong is this trace's own.
              reflection: {
                ...known.reflection,
                ...(facts.attribution ? { attribution: facts.attribution } : {}),
              },
              notStoredReason: null,
              answerEvaluation,
              evaluationFinding,
              memory: { action: "reuse", similarity: matched.similarity, signatureLevel },
            },
            now,
          ),
        );
      } else if (matched && judged) {
        const storage = judged.storage;
        const merged = storage.action === "update" || storage.action === "noop" ? storage : null;
        const stored = op !== null;
        outputs.push(
          outcomeMessage(
            event,
            matched.candidate.signature,
            {
              verdict: judged.verdict,
              reflectionId: merged ? merged.into : (created?.id ?? null),
              stored,
              // Merged into a stored lesson, or another worker stored the same signature first.
              deduplicated: merged !== null || (created !== null && occurrences !== null && occurrences > 1),
              occurrences: occurrences ?? 1,
              metrics: judged.validation.metrics,
              qualityScore: judged.validation.qualityScore,
              violations: judged.validation.violations,
              attempts: judged.attempts,
              generator: generator.name,
              reflection: judged.reflection,
              notStoredReason: storage.action === "none" ? storage.reason : null,
              answerEvaluation,
              evaluationFinding,
              memory: {
                action: judged.verdict === "rejected" ? "none" : storage.action,
                similarity: merged ? merged.similarity : null,
                signatureLevel,
              },
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
            signature: matched?.candidate.signature ?? null,
            store: op,
            loop,
            answerEvaluation,
            episode: facts.episode,
            judgement: judged
              ? {
                  verdict: judged.verdict,
                  qualityScore: judged.validation.qualityScore,
                  violations: judged.validation.violations,
                  generator: generator.name,
                  attempts: judged.attempts,
                  stored: op !== null,
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

    // Refresh the cache only after the transaction that made it true has committed. A merge
    // changed a lesson stored under another signature: that entry is left to expire, and the
    // new signature is read from Postgres the next time.
    const remembered = cachedAfterCommit(matched, created, rejudged);
    const occurrences = result.occurrences;
    const refreshed = remembered && occurrences !== null ? { ...remembered, occurrences } : null;
    await timer.time("index", () => index.markProcessed(event.tenantId, event.eventId, refreshed));

    return {
      status: result.committed ? "processed" : "duplicate-concurrent",
      outputs: result.outputs,
      verdict: judged?.verdict ?? rejudged?.verdict ?? matched?.known?.verdict ?? null,
      decision: loop.decision,
      generatorCalls: judged?.attempts ?? 0,
    };
  }

  return { process };
}

/** What the signature's cache entry holds once the event's commit is in. */
function cachedAfterCommit(
  matched: Match | null,
  created: NewReflection | null,
  rejudged: Rejudgement | null,
): StoredReflection | null {
  if (!matched) return null;
  if (matched.known) return { ...matched.known, signature: matched.candidate.signature, ...(rejudged ?? {}) };
  if (!created) return null;
  return {
    id: created.id,
    signature: matched.candidate.signature,
    reflection: created.reflection,
    verdict: created.verdict,
    qualityScore: created.qualityScore,
    metrics: created.metrics,
    violations: created.violations,
    generator: created.generator,
    attempts: created.attempts,
    occurrences: 1,
    sourceVector: created.sourceVector,
  };
}

export type TaskProcessor = ReturnType<typeof createTaskProcessor>;
