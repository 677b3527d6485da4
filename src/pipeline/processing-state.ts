import type {
  Attribution,
  Reflection,
  TaskCompleted,
  TraceEvent,
  Verdict,
} from "../domain/contracts/index.js";
import type { LocatedFailure } from "../domain/attribution/located-failure.js";
import type { AnswerEvaluation } from "../domain/evaluation/answer-evaluation.js";
import type { findingFromEvaluation } from "../domain/evaluation/reflection-from-evaluation.js";
import type { LoopDecisionResult } from "../domain/guardrails/decide-loop.js";
import type { StorageDecision } from "../domain/memory/decide-storage.js";
import type { ValidationResult } from "../domain/quality/validate-reflection.js";
import type { Selection } from "../domain/select-for-reflection.js";
import type { SignatureCandidate } from "../domain/signature.js";
import type {
  CommitResult,
  LoopContext,
  NewReflection,
  ReflectionGenerator,
  Rejudgement,
  StoredReflection,
  UnitOfWork,
} from "./ports.js";

/** What the processor knows about one event, stage by stage. */

/** A newly generated reflection, judged, with what memory does with it. */
export interface Judged {
  reflection: Reflection;
  /** The generator that wrote it: the configured one, or the offline one over the LLM budget. */
  generator: ReflectionGenerator["name"];
  validation: ValidationResult;
  verdict: Verdict;
  attempts: number;
  embedding: number[];
  storage: StorageDecision;
}

/** The lesson a trace is filed under: a stored one that fits it, or a signature for a new one. */
export interface Match {
  candidate: SignatureCandidate;
  /** The stored lesson that fits the trace; null when the trace needs a reflection of its own. */
  known: StoredReflection | null;
  similarity: number | null;
}

/** Everything about the event that is known before any store or model is asked (`eventFacts`). */
export interface EventFacts {
  event: TaskCompleted;
  /** Whether the event is worth a reflection, and why (`selectForReflection`). */
  selection: Selection;
  /** The trace's scan for where it failed; null for a success that is not reflected on. */
  located: LocatedFailure | null;
  /** Where the trace went wrong and who did it, read offline (reflected failures only). */
  attribution: Attribution | undefined;
  failingStep: TraceEvent | undefined;
  /** What the failing step did when it is a call (`actionKey`): the same mistake is the same action. */
  action: string | null;
  /** The signatures a reflected event may be filed under, most general first; none when not reflected. */
  candidates: SignatureCandidate[];
  /** The first signature of the event, reflected or not: the consumer's single-flight key. */
  signature: string;
  episode: string;
  /** The agent's own evaluator finding (a conflict, an unverified claim…) when the signature rests on it. */
  finding: ReturnType<typeof findingFromEvaluation>;
}

/** What the event leaves in memory, once reflected or recalled. */
export interface MemoryOutcome {
  matched: Match;
  judged: Judged | null;
  rejudged: Rejudgement | null;
  /** The store's write (null: nothing kept) and the new reflection it inserts, if any. */
  op: UnitOfWork["store"];
  created: NewReflection | null;
}

/** An event on its way through the processor's stages, before the lesson is looked for. */
export interface EventState {
  facts: EventFacts;
  /** The Kafka record the event was read from (`topic/partition/offset`), when known. */
  sourceRecord: string | null;
  /** The decision time, read once per event. */
  now: Date;
  /** The first signature's cached lesson, read with the processed check. */
  cached: StoredReflection | null;
  /** The loop context, read while the lesson is found (awaited by the decision). */
  loopContext: Promise<LoopContext>;
  /** Whether the tenant's work may use the model: asked once, and only when needed. */
  route: () => Promise<"model" | "offline">;
  answerEvaluation: AnswerEvaluation | null;
}

/** After "match": the trace's vector and the lesson it is filed under. */
export interface MatchedState extends EventState {
  traceVector: number[];
  matched: Match;
}

/** After "rejudge": the recalled lesson's new judgement, when its evidence changed it. */
export interface RejudgedState extends MatchedState {
  rejudged: Rejudgement | null;
}

/** After "reflect": the new reflection, judged (null when a stored lesson was recalled). */
export interface ReflectedState extends RejudgedState {
  judged: Judged | null;
}

/** After "store operation": what the event leaves in memory (null: it is filed under no lesson). */
export interface RememberedState extends EventState {
  memory: MemoryOutcome | null;
}

/** After "decide and persist": the loop decision and what the commit returned. */
export interface PersistedState extends RememberedState {
  loop: LoopDecisionResult;
  result: CommitResult;
}
