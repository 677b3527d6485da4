import type {
  Attribution,
  Reflection,
  TaskCompleted,
  TraceEvent,
  Verdict,
} from "../domain/contracts/index.js";
import type { findingFromEvaluation } from "../domain/evaluation/reflection-from-evaluation.js";
import type { StorageDecision } from "../domain/memory/decide-storage.js";
import type { ValidationResult } from "../domain/quality/validate-reflection.js";
import type { SignatureCandidate } from "../domain/signature.js";
import type {
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

/** Everything about the event that is known before any store or model is asked. */
export interface EventFacts {
  event: TaskCompleted;
  /** Where the trace went wrong and who did it, read offline (failures only). */
  attribution: Attribution | undefined;
  failingStep: TraceEvent | undefined;
  /** What the failing step did when it is a call (`actionKey`): the same mistake is the same action. */
  action: string | null;
  candidates: SignatureCandidate[];
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
