import type { EmbedRole } from "../domain/embedding/model-profiles.js";
import type { TenantVolumeLimit } from "./tenant-limits.js";
import type { LocatedFailure } from "../domain/attribution/located-failure.js";
import type { Rating } from "../domain/feedback/effective-quality.js";
import type {
  ContractName,
  GeneratorName,
  QualityMetrics,
  Reflection,
  TaskCompleted,
  Verdict,
} from "../domain/contracts/index.js";
import type { CommonIssue } from "../domain/evaluation/adaptive-insights.js";
import type { AnswerEvaluation } from "../domain/evaluation/answer-evaluation.js";
import type { LoopDecisionResult, LoopOverride, PreviousLoop } from "../domain/guardrails/decide-loop.js";
import type { FailingStepIdentity } from "../domain/memory/same-lesson.js";
import type { ValidationResult } from "../domain/quality/validate-reflection.js";

/** The ports the pipeline needs; adapters implement them and the composition root (src/composition/) wires them. */

export interface Clock {
  now(): Date;
}

export interface GenerationRequest {
  event: TaskCompleted;
  attempt: number;
  /** The previous attempt's quality violations, for the generator to fix. */
  violations: string[];
  missingFields: string[];
  /** Adaptive prompting: common issues of the tenant's recent low-quality reflections. */
  insights: string[];
  /** The self-evaluation of the agent's answer, when the task carried one. */
  answerEvaluation: AnswerEvaluation | null;
  /** Where the trace failed, as the event's facts located it; absent: the generator locates it. */
  located?: LocatedFailure | null;
}

/** The self-evaluation of an agent's answer (docs/specification.md#answer-self-evaluation). */
export interface AnswerEvaluator {
  readonly name: AnswerEvaluation["evaluator"];
  /** Null when the task carries no question and answer to judge. */
  evaluate(event: TaskCompleted): Promise<AnswerEvaluation | null>;
}

export interface ReflectionGenerator {
  readonly name: Exclude<GeneratorName, "reused">;
  generate(request: GenerationRequest): Promise<Reflection>;
}

/**
 * LLM spend per tenant (`LLM_TENANT_TOKEN_BUDGET` tokens per `LLM_TENANT_BUDGET_WINDOW_MS`), counted
 * from the tokens the endpoint reports and shared by every process.
 */
export interface SpendGate {
  /**
   * Whether the tenant's next work may use the model: `model` within budget; `offline` over budget
   * with `LLM_OVER_BUDGET=heuristic` (the offline generator and evaluator stand in, and say so).
   * Over budget with `LLM_OVER_BUDGET=wait` it throws `LLM_BUDGET_EXHAUSTED`, which holds the event.
   */
  admit(tenantId: string): Promise<"model" | "offline">;
  /**
   * Counts tokens of one of the tenant's requests: reserved from an estimate before it is sent,
   * then what the endpoint reported beyond that (or, without `usage`, the estimate stays).
   */
  record(tenantId: string, tokens: number): Promise<void>;
  /** Gives back reserved tokens a request did not use (it failed, or used fewer). */
  release?(tenantId: string, tokens: number): Promise<void>;
  /**
   * Takes `tokens` from the tenant's window in one atomic step, or refuses (false) when they do
   * not fit in what is left: admission and reservation at once, so concurrent requests cannot all
   * be admitted against the same unspent budget.
   */
  reserve?(tenantId: string, tokens: number): Promise<boolean>;
}

export type { LifecycleSubject, ReflectionLifecycle } from "./reflection-lifecycle.js";
export type {
  AnswerFeedbackInput,
  AnswerFeedbackResult,
  RatedAnswer,
} from "../domain/feedback/answer-feedback.js";

/** Receives every judged reflection, for the quality metrics. */
export interface QualityObserver {
  /**
   * `succeeded`: the improvement loop's final reflection meets every threshold a rewrite works
   * towards (`improvementLoopSucceeded`, src/domain/quality/loop-success.ts).
   */
  observe(judgement: {
    validation: ValidationResult;
    verdict: Verdict;
    attempts: number;
    succeeded: boolean;
  }): void;
}

/** What a text is to an embedder: a task asking for lessons (query), or stored text (passage). */
export type { EmbedRole };

export interface Embedder {
  readonly name: string;
  /**
   * `tenantId`: whose work the texts are; a remote embedder charges their tokens to that tenant's
   * budget. A local one costs no tokens and ignores it. `role`: `query` for a task asking for
   * lessons (`POST /api/v1/lessons/for-task`), `passage` (the default) for everything stored or
   * compared with stored text; a model trained with prefixes (e5) reads each behind its own, the
   * others ignore it.
   */
  embed(texts: string[], tenantId?: string, role?: EmbedRole): Promise<number[][]>;
  /**
   * Typical cosine similarity of unrelated and of plainly related texts under this embedder,
   * measured; the judge maps similarities onto 0–1 with it. Absent: similarities are used as
   * they are.
   */
  readonly similarityScale?: { unrelated: number; related: number };
}

/**
 * Turns Kafka values into objects and back: plain JSON, or the Confluent wire format with a
 * schema registry. The Kafka adapters take one; the composition root chooses which.
 */
export interface ValueCodec {
  readonly format: "json" | "confluent-json";
  decode(value: Buffer): Promise<unknown>;
  encode(topic: string, contract: ContractName, value: object): Promise<Buffer>;
  /** For /readyz: whether the registry answers; absent when no registry is used. */
  readonly check?: () => Promise<boolean>;
}

export type OutputRole = "reflectionAccepted" | "reflectionRejected" | "loopDecision";

/** A message the pipeline wants published; the Kafka adapter maps roles to topics and headers. */
export interface OutboundMessage {
  role: OutputRole;
  key: string;
  /** CloudEvents id and type. */
  id: string;
  type: string;
  subject: string;
  time: string;
  value: Record<string, unknown>;
}

export interface StoredReflection {
  id: string;
  /** The signature it was found under (its own, or one merged into it). */
  signature: string;
  reflection: Reflection;
  verdict: Exclude<Verdict, "rejected">;
  qualityScore: number;
  metrics: QualityMetrics;
  violations: string[];
  occurrences: number;
  generator: GeneratorName;
  attempts: number;
  /**
   * Embedding of the trace the lesson was written for (or, found under a merged signature, of
   * that signature's trace): a new trace reuses the lesson only when it is close to it. Null for
   * lessons stored before traces were compared, or by another embedder.
   */
  sourceVector?: number[] | null;
}

/** A stored reflection near a task, for novelty and merging. */
export interface Neighbour {
  id: string;
  embedding: number[];
  qualityScore: number;
  /** The agent and tool of the failing step the lesson blames; null or absent when it names none. */
  failingStep?: FailingStepIdentity | null;
}

/** A stored lesson judged again because its evidence changed (pattern validity). */
export interface Rejudgement {
  verdict: Exclude<Verdict, "rejected">;
  qualityScore: number;
  metrics: QualityMetrics;
  violations: string[];
}

export interface PatternEvidence {
  occurrences: number;
  total: number;
}

export interface LoopContext {
  previous: PreviousLoop | null;
  /** The loop's own override, else one set on its family's root loop (it covers every rerun). */
  override: LoopOverride | null;
  biasHistory: Map<string, number>;
  /** Reruns already recorded in the loop's family, the loop itself excluded. */
  familyReruns?: number;
}

export interface NewReflection {
  id: string;
  signatureType: string;
  reflection: Reflection;
  verdict: Exclude<Verdict, "rejected">;
  qualityScore: number;
  metrics: QualityMetrics;
  violations: string[];
  generator: Exclude<GeneratorName, "reused">;
  attempts: number;
  embedding: number[];
  /** Embedding of the trace it was written for. */
  sourceVector: number[] | null;
}

/** Everything one event changes, written in one transaction. */
export interface UnitOfWork {
  event: TaskCompleted;
  signature: string | null;
  /**
   * A new reflection to insert; an existing one whose occurrence count goes up (judged again
   * when its evidence changed); or a new near-duplicate merged into an existing one, whose
   * signature then leads to it (`replacement`: the better-judged text that now stands for both).
   */
  store:
    | { kind: "insert"; reflection: NewReflection }
    | { kind: "increment"; reflectionId: string; rejudged: Rejudgement | null }
    | {
        kind: "merge";
        reflectionId: string;
        signature: string;
        sourceVector: number[] | null;
        replacement: NewReflection | null;
      }
    | null;
  loop: LoopDecisionResult;
  /** Stored for adaptive prompting and the insights API. */
  answerEvaluation: AnswerEvaluation | null;
  /** The task as episodic memory keeps it (pattern evidence counts over these). */
  episode: string;
  /** The quality judgement of a newly generated reflection (stored or not), for adaptive prompting. */
  judgement: {
    verdict: Verdict;
    qualityScore: number;
    violations: string[];
    generator: Exclude<GeneratorName, "reused">;
    attempts: number;
    stored: boolean;
  } | null;
  decidedAt: Date;
  /** The Kafka record (`topic/partition/offset`) being processed; null outside a consumer. */
  sourceRecord: string | null;
}

/** An event id already processed: the outputs it published and the record that committed it. */
export interface ProcessedEvent {
  /** The outputs as built before the commit counted (`withOccurrences` applies the count). */
  outputs: OutboundMessage[];
  /** The occurrence count the commit stored beside them; null when it counted nothing. */
  occurrences: number | null;
  /** `topic/partition/offset` of the committing record; null when unknown (older rows, tools). */
  sourceRecord: string | null;
}

export interface CommitResult {
  /** False when another worker had already processed this event id: `outputs` are theirs. */
  committed: boolean;
  /**
   * The outputs stored with the event id, as built before the commit counted: the ones given, or
   * another worker's when it committed first (`withOccurrences` applies `occurrences` to them).
   */
  outputs: OutboundMessage[];
  /** When not committed: the record that did commit the event id (see `ProcessedEvent`). */
  committedBy?: string | null;
  /** The occurrence count the commit stored beside the outputs; null when it counted nothing. */
  occurrences: number | null;
  /**
   * True when loop state the decision was made from changed before the commit (another family
   * of the tenant raised the same bias tag at the same moment): nothing was written, and the
   * caller decides again from fresh state.
   */
  staleLoopState?: boolean;
}

export interface ReflectionStore {
  findProcessed(tenantId: string, eventId: string): Promise<ProcessedEvent | null>;
  /** The lesson stored under `signature`, its own or one merged into it. */
  findBySignature(tenantId: string, signature: string): Promise<StoredReflection | null>;
  patternEvidence(tenantId: string, patterns: string[]): Promise<Map<string, PatternEvidence>>;
  /** The tenant's stored reflections closest to `text`, by this process's embedder (novelty, merging). */
  nearbyReflections(tenantId: string, text: string, limit: number): Promise<Neighbour[]>;
  loopContext(event: TaskCompleted): Promise<LoopContext>;
  /**
   * Issues common to the tenant's recent low-quality reflections and answers
   * (docs/specification.md#adaptive-prompting).
   */
  commonIssues(tenantId: string): Promise<CommonIssue[]>;
  /**
   * Writes the unit of work and its outputs in one transaction, and returns the occurrence count
   * the write stored beside them (after an upsert); the store never changes the outputs.
   */
  commit(unit: UnitOfWork, outputs: OutboundMessage[]): Promise<CommitResult>;
}

/** Redis: a cache in front of Postgres, never the truth. */
export interface SignatureIndex {
  /**
   * Whether the event id was handled, and the cached reflection of `signature` when one is
   * given: what an event needs from the cache before it starts, in one round trip.
   */
  recall(
    tenantId: string,
    eventId: string,
    signature: string | null,
  ): Promise<{ processed: boolean; cached: StoredReflection | null }>;
  /** The cached lesson of a signature, if any. */
  cached(tenantId: string, signature: string): Promise<StoredReflection | null>;
  /** Caches `stored` under its `signature`. */
  remember(tenantId: string, stored: StoredReflection): Promise<void>;
  /**
   * After the event's commit: caches `stored` (when given) and marks the event id handled, in one
   * round trip.
   */
  markProcessed(tenantId: string, eventId: string, stored: StoredReflection | null): Promise<void>;
}

/**
 * Counts, across restarts, how often a consumed record made the processor crash. Kept outside the
 * process because the count must survive the crash it counts.
 */
export interface CrashCounter {
  /**
   * Adds one crash of the record (`topic/partition/offset`); returns its crashes so far and how
   * many distinct records of the group crashed the processor within the recent window.
   */
  record(recordRef: string): Promise<{ crashes: number; crashingRecords: number }>;
  /**
   * Counts one delivery of the record before it is processed; returns its deliveries that never
   * finished, this one included, and the distinct records of the group that were delivered again
   * unfinished or crashed within the recent window. A record that stalls the process until the
   * liveness probe kills it, or exhausts its memory, throws nothing: only this count sees it.
   */
  begin?(recordRef: string): Promise<{ deliveries: number; crashingRecords: number }>;
  /** The record's delivery finished (committed, or handed back on a rebalance): its count goes. */
  finish?(recordRef: string): Promise<void>;
}

/** One vote on a lesson, from the HTTP API or the feedback topic. */
export interface FeedbackInput {
  feedbackId: string;
  reflectionId: string;
  rating: Rating;
  comment: string | null;
  userId: string | null;
  source: "http" | "kafka";
  /** When the user gave it; the latest vote decides the effective quality. */
  at: Date;
}

export type FeedbackResult =
  | { status: "not_found" }
  /** The feedback id was already used for another reflection or rating. */
  | { status: "conflict"; reflectionId: string; rating: Rating }
  | {
      status: "recorded" | "duplicate";
      reflectionId: string;
      judgedQuality: number;
      effectiveQuality: number;
      served: boolean;
      helpful: number;
      harmful: number;
      latestRating: Rating | null;
    };

/** New lessons per tenant a minute (LESSONS_NEW_PER_MINUTE), and who hears of one refused. */
export interface NewLessonLimit {
  limit: TenantVolumeLimit;
  /** A new lesson was judged worth storing and not stored: the tenant is past its limit. */
  refused?(tenantId: string): void;
}
