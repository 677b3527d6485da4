import type { LoopDecision, TaskCompleted, Verdict } from "../domain/contracts/index.js";
import type { AppliedOutcomeStore } from "../domain/feedback/applied-outcome.js";
import { cosineSimilarity } from "../domain/embedding/hashing-embedding.js";
import { hasAnswerToJudge, type AnswerEvaluation } from "../domain/evaluation/answer-evaluation.js";
import { insightLines } from "../domain/evaluation/adaptive-insights.js";
import { findingFromEvaluation } from "../domain/evaluation/reflection-from-evaluation.js";
import { ReflectorError } from "../domain/errors.js";
import { decideLoop, type LoopDecisionResult } from "../domain/guardrails/decide-loop.js";
import type { GuardrailConfig } from "../domain/guardrails/guardrail-config.js";
import { decideStorage } from "../domain/memory/decide-storage.js";
import { nearestSameLesson } from "../domain/memory/same-lesson.js";
import { actionKey, sameAction } from "../domain/memory/action-key.js";
import { attributeFailure } from "../domain/attribution/attribute-failure.js";
import { defaultMemoryConfig, type MemoryConfig } from "../domain/memory/memory-config.js";
import { episodeText, taskText, traceText } from "../domain/memory/trace-text.js";
import { runImprovementLoop } from "../domain/quality/improvement-loop.js";
import { withEpisode, withRecurrences } from "../domain/quality/pattern-validity.js";
import type { QualityConfig } from "../domain/quality/quality-config.js";
import { traceFacts } from "../domain/quality/trace-facts.js";
import {
  decideVerdict,
  isPatternViolation,
  validateReflection,
  type ValidationResult,
} from "../domain/quality/validate-reflection.js";
import { selectForReflection, type ReflectionMode } from "../domain/select-for-reflection.js";
import { signatureCandidates } from "../domain/signature.js";
import { stableId } from "../domain/stable-id.js";
import { decisionMessage, lessonsOfMemory } from "./decision-message.js";
import { recordAppliedOutcomes, recordCommittedOutcomes } from "./lesson-outcomes.js";
import { createAttemptJudge } from "./judge-reflection.js";
import { outcomeBody, outcomeMessage } from "./outcome-message.js";
import type {
  AnswerEvaluator,
  Clock,
  Embedder,
  LoopContext,
  NewReflection,
  OutboundMessage,
  Rejudgement,
  ReflectionGenerator,
  ReflectionStore,
  SignatureIndex,
  SpendGate,
  StoredReflection,
  UnitOfWork,
} from "./ports.js";
import type { StageTimer } from "./stage-timer.js";
import type { EventFacts, Judged, Match, MemoryOutcome } from "./processing-state.js";

/** Re-decisions after a concurrent bias-history change, before the event is retried whole. */
const maxLoopStateRetries = 5;

/** Receives every judged reflection, for the quality metrics. */
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
  /**
   * LLM spend limits: the gate asked before a tenant's work uses the model, and the offline
   * generator and evaluator that stand in when it answers `offline`.
   */
  spend?: { gate: SpendGate; generator: ReflectionGenerator; answerEvaluator: AnswerEvaluator };
  /** Whether the lessons a rerun carried helped (counted after the rerun commits); absent: not counted. */
  appliedOutcomes?: AppliedOutcomeStore;
}

/**
 * `replayed`: the record that committed the event id, delivered again (after a crash its outputs
 * may not have been published): the stored outputs go out again. `duplicate`: another record of
 * an event id already committed (a producer's retry, a DLQ replay): nothing is published.
 */
export type ProcessStatus = "processed" | "replayed" | "duplicate";

export interface ProcessResult {
  status: ProcessStatus;
  outputs: OutboundMessage[];
  verdict: Verdict | null;
  decision: LoopDecision["decision"] | null;
  generatorCalls: number;
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
    return {
      event,
      attribution,
      failingStep,
      action: reflect ? actionKey(event, failingStep) : null,
      candidates,
      episode: episodeText(event, failingStep),
      finding,
    };
  }

  /** The lesson of a signature: Redis first (unless it was just asked), then Postgres. */
  async function lookUp(
    tenantId: string,
    signature: string,
    cacheAsked: boolean,
  ): Promise<StoredReflection | null> {
    const cached = cacheAsked ? null : await timer.time("index", () => index.cached(tenantId, signature));
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
      // The first signature's cache entry came with the processed check.
      const known =
        (i === 0 ? firstCached : null) ?? (await lookUp(event.tenantId, candidate.signature, i === 0));
      if (!known) return { candidate, known: null, similarity: null } satisfies Match;
      const source = known.sourceVector;
      const similarity = source?.length === traceVector.length ? cosineSimilarity(traceVector, source) : null;
      last = { candidate, known, similarity };
      // A lesson written for a call fits only the same action (tool, argument shape, the user's
      // identifiers): alike traces of another user's request, or of another call, are not it.
      const knownAction = known.reflection.attribution?.action;
      const sameCall = !knownAction || !facts.action || sameAction(knownAction, facts.action);
      if (similarity !== null && similarity >= memory.reuseMinSimilarity && sameCall) return last;
    }
    // Even the task-level signature is taken: the same task failing at the same step again.
    return last;
  }

  /** Stage "rejudge": a recalled lesson judged again when pattern evidence may have accrued. */
  async function rejudge(facts: EventFacts, known: StoredReflection): Promise<Rejudgement | null> {
    const patterns = known.reflection.patterns;
    // Only pattern validity depends on evidence that accrues; the other metrics stay as judged.
    const unproven = known.violations.some(isPatternViolation);
    if (known.verdict === "accepted" || patterns.length === 0 || !unproven) return null;
    const stored = await timer.time("store-read", () =>
      store.patternEvidence(facts.event.tenantId, patterns),
    );
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

  /** Stage "reflect": generate, judge and improve a reflection, then decide what memory keeps. */
  async function reflect(
    facts: EventFacts,
    task: { text: string; vector: number[] },
    answerEvaluation: AnswerEvaluation | null,
    generator: ReflectionGenerator,
  ): Promise<Judged> {
    const { event } = facts;
    const [neighbours, issues] = await timer.time("store-read", () =>
      Promise.all([
        store.nearbyReflections(event.tenantId, task.text, 50),
        store.commonIssues(event.tenantId),
      ]),
    );
    const insights = insightLines(issues);
    const judge = createAttemptJudge({
      tenantId: event.tenantId,
      trace: traceFacts(event),
      taskVector: task.vector,
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
      evaluate: (reflection) =>
        timer.time("judge", () => judge.evaluate(reflection), {
          outcome: (v) => ({ "reflector.quality_score": v.qualityScore }),
        }),
    });
    // The blamed call's action goes with the lesson, so a merge can tell calls apart.
    const action = facts.action;
    const attribution = result.reflection.attribution;
    const reflection =
      action && attribution && attribution.stepIndex === facts.attribution?.stepIndex
        ? { ...result.reflection, attribution: { ...attribution, action } }
        : result.reflection;
    const judgement = judge.judgementOf(result.reflection);
    const verdict = decideVerdict(result.validation, quality);
    deps.observer?.observe({ validation: result.validation, verdict, attempts: result.attempts });
    // The lesson it may merge into: the most similar stored one that blames the same failing step.
    const nearest = nearestSameLesson(
      { embedding: judgement.embedding, failingStep: reflection.attribution ?? null },
      neighbours.map((n) => ({ ...n, failingStep: n.failingStep ?? null })),
    );
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
      reflection,
      generator: generator.name,
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
      generator: judged.generator,
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

  /** Stage "remember": the lesson the trace is filed under, judged or generated as needed. */
  async function remember(
    facts: EventFacts,
    cached: StoredReflection | null,
    answerEvaluation: AnswerEvaluation | null,
    route: () => Promise<"model" | "offline">,
  ): Promise<MemoryOutcome | null> {
    if (facts.candidates.length === 0) return null;
    const { event, failingStep } = facts;
    // The trace is embedded for matching; the task only when a new lesson is judged (relevance).
    const [traceVector] = await timer.time("embed", () =>
      embedder.embed([traceText(event, failingStep)], event.tenantId),
    );
    if (!traceVector) throw new Error("embedder returned no vector");
    const matched = await match(facts, cached, traceVector);
    if (!matched) return null;
    const rejudged = matched.known ? await rejudge(facts, matched.known) : null;
    let judged: Judged | null = null;
    if (!matched.known) {
      const task = taskText(event, failingStep);
      const [taskVector] = await timer.time("embed", () => embedder.embed([task], event.tenantId));
      if (!taskVector) throw new Error("embedder returned no vector");
      const chosen = (await route()) === "offline" && deps.spend ? deps.spend.generator : generator;
      judged = await timer.time(
        "reflect",
        () => reflect(facts, { text: task, vector: taskVector }, answerEvaluation, chosen),
        {
          attributes: { "reflector.signature": matched.candidate.signature },
          outcome: (j) => ({ "reflector.verdict": j.verdict, "reflector.attempts": j.attempts }),
        },
      );
    }
    const { op, created } = storeOperation(facts, matched, traceVector, judged, rejudged);
    return { matched, judged, rejudged, op, created };
  }

  /**
   * Stage "decide and persist": the loop decision and everything the event changes, in one
   * commit with the outputs built from what it returned. A concurrent family of the tenant may
   * move the bias history first: then the loop is decided again, from fresh state, so a bias echo
   * is caught on the event that reaches the threshold.
   */
  async function decideAndPersist(
    facts: EventFacts,
    memoryOutcome: MemoryOutcome | null,
    answerEvaluation: AnswerEvaluation | null,
    now: Date,
    sourceRecord: string | null,
    prefetched: Promise<LoopContext>,
  ) {
    const { event } = facts;
    const decide = async (attempt: number) => {
      const loopContext =
        attempt === 0 ? await prefetched : await timer.time("store-read", () => store.loopContext(event));
      return decideLoop(
        { event, ...loopContext, answerNeedsRetry: answerEvaluation?.shouldRetry ?? false },
        guardrails,
      );
    };
    const judged = memoryOutcome?.judged ?? null;
    const persist = (loop: LoopDecisionResult) =>
      timer.time(
        "persist",
        () =>
          store.commit(
            {
              event,
              signature: memoryOutcome?.matched.candidate.signature ?? null,
              store: memoryOutcome?.op ?? null,
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
                    stored: memoryOutcome?.op != null,
                  }
                : null,
              decidedAt: now,
              sourceRecord,
            },
            (occurrences) => [
              ...(memoryOutcome
                ? [
                    outcomeMessage(
                      event,
                      memoryOutcome.matched.candidate.signature,
                      outcomeBody(memoryOutcome, {
                        facts,
                        answerEvaluation,
                        generator: judged?.generator ?? generator.name,
                        occurrences,
                      }),
                      now,
                    ),
                  ]
                : []),
              decisionMessage(event, loop, now, lessonsOfMemory(memoryOutcome)),
            ],
          ),
        {
          attributes: {
            "reflector.signature": memoryOutcome?.matched.candidate.signature,
            "reflector.verdict": judged?.verdict,
            "reflector.decision": loop.decision,
          },
          outcome: (r) => ({ "reflector.committed": r.committed }),
        },
      );
    for (let attempt = 0; attempt <= maxLoopStateRetries; attempt += 1) {
      const loop = await decide(attempt);
      const result = await persist(loop);
      if (!result.staleLoopState) return { result, loop };
    }
    throw new ReflectorError(
      "STORE_UNAVAILABLE",
      "loop state kept changing under the decision; retrying the event",
    );
  }

  /** An event committed before (a crash may have come before its outcomes were counted). */
  async function recordCommitted(event: TaskCompleted, outputs: OutboundMessage[]): Promise<void> {
    const applied = deps.appliedOutcomes;
    if (applied)
      await timer.time("lesson-outcomes", () =>
        recordCommittedOutcomes(applied, event, outputs, clock.now()),
      );
  }

  /**
   * The outputs to publish for an event id that is already committed: the stored ones for the
   * record that committed it (or when either record is unknown), none for any other record.
   */
  function alreadyCommitted(
    outputs: OutboundMessage[],
    committedBy: string | null | undefined,
    sourceRecord: string | null,
  ): ProcessResult {
    const same = sourceRecord === null || committedBy == null || committedBy === sourceRecord;
    return {
      status: same ? "replayed" : "duplicate",
      outputs: same ? outputs : [],
      verdict: null,
      decision: null,
      generatorCalls: 0,
    };
  }

  /**
   * @param sourceRecord the Kafka record (`topic/partition/offset`) the event was read from; it
   * decides whether an already committed event id publishes again (see `ProcessStatus`)
   */
  async function process(event: TaskCompleted, sourceRecord: string | null = null): Promise<ProcessResult> {
    const facts = factsOf(event);
    // The first signature's cached lesson comes with the processed check: one Redis round trip.
    const recalled = await timer.time("index", () =>
      index.recall(event.tenantId, event.eventId, facts.candidates[0]?.signature ?? null),
    );
    if (recalled.processed) {
      const processed = await store.findProcessed(event.tenantId, event.eventId);
      if (processed) {
        await recordCommitted(event, processed.outputs);
        return alreadyCommitted(processed.outputs, processed.sourceRecord, sourceRecord);
      }
    }
    const now = clock.now();
    // The spend gate is asked once per event, and only when the event needs the model.
    let routed: Promise<"model" | "offline"> | null = null;
    const route = () =>
      (routed ??= deps.spend ? deps.spend.gate.admit(event.tenantId) : Promise.resolve("model"));
    // The loop context depends on the event alone, so it is read while the lesson is found rather
    // than after (one round trip less on the way): the family's earlier events have committed
    // before this one started, and the tenant's bias history is checked again by the commit.
    const loopContext = timer.time("store-read", () => store.loopContext(event));
    // Awaited in decideAndPersist; a failure of the work before it must not leave it unhandled.
    loopContext.catch(() => undefined);
    // Judging the agent's answer costs what a reflection costs, so it follows the same selection.
    const evaluator = async () =>
      deps.spend && hasAnswerToJudge(event) && (await route()) === "offline"
        ? deps.spend.answerEvaluator
        : deps.answerEvaluator;
    const answerEvaluation =
      facts.candidates.length > 0
        ? await timer.time("evaluate-answer", async () => (await evaluator()).evaluate(event))
        : null;
    const memoryOutcome = await remember(facts, recalled.cached, answerEvaluation, route);
    const { result, loop } = await decideAndPersist(
      facts,
      memoryOutcome,
      answerEvaluation,
      now,
      sourceRecord,
      loopContext,
    );
    if (!result.committed) {
      await recordCommitted(event, result.outputs);
      return alreadyCommitted(result.outputs, result.committedBy, sourceRecord);
    }

    // Refresh the cache only after the transaction that made it true has committed. A merge
    // changed a lesson stored under another signature: that entry is left to expire, and the
    // new signature is read from Postgres the next time.
    const remembered = memoryOutcome ? cachedAfterCommit(memoryOutcome) : null;
    const occurrences = result.occurrences;
    const refreshed = remembered && occurrences !== null ? { ...remembered, occurrences } : null;
    await timer.time("index", () => index.markProcessed(event.tenantId, event.eventId, refreshed));
    const applied = deps.appliedOutcomes;
    if (applied)
      await timer.time("lesson-outcomes", () => recordAppliedOutcomes(applied, event, memoryOutcome, now));

    const { judged, rejudged, matched } = memoryOutcome ?? {};
    return {
      status: "processed",
      outputs: result.outputs,
      verdict: judged?.verdict ?? rejudged?.verdict ?? matched?.known?.verdict ?? null,
      decision: loop.decision,
      generatorCalls: judged?.attempts ?? 0,
    };
  }

  return { process };
}

/** What the signature's cache entry holds once the event's commit is in. */
function cachedAfterCommit({ matched, created, rejudged }: MemoryOutcome): StoredReflection | null {
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
