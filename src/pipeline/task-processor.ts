import type { TaskCompleted } from "../domain/contracts/index.js";
import type { AppliedOutcomeStore } from "../domain/feedback/applied-outcome.js";
import type { GuardrailConfig } from "../domain/guardrails/guardrail-config.js";
import { defaultMemoryConfig, type MemoryConfig } from "../domain/memory/memory-config.js";
import type { QualityConfig } from "../domain/quality/quality-config.js";
import type { ReflectionMode } from "../domain/select-for-reflection.js";
import { eventFacts } from "./event-facts.js";
import { createSignatureFlights } from "./signature-flights.js";
import type { CauseJudge } from "./judge-reflection.js";
import { alreadyCommitted, processedResult, type ProcessResult } from "./process-result.js";
import type {
  AnswerEvaluator,
  Clock,
  Embedder,
  NewLessonLimit,
  QualityObserver,
  ReflectionGenerator,
  ReflectionLifecycle,
  ReflectionStore,
  SignatureIndex,
  SpendGate,
} from "./ports.js";
import type { EventFacts, EventState } from "./processing-state.js";
import { afterCommit, countCommittedOutcomes } from "./stages/after-commit.js";
import { decideAndPersist } from "./stages/decide-and-persist.js";
import { evaluateAnswer } from "./stages/evaluate-answer.js";
import { match } from "./stages/match.js";
import { limitNewLessons } from "./stages/new-lesson-limit.js";
import { recall } from "./stages/recall.js";
import { reflect } from "./stages/reflect.js";
import { rejudge } from "./stages/rejudge.js";
import { storeOperation } from "./stages/store-operation.js";
import type { StageTimer } from "./stage-timer.js";

export type { ProcessResult, ProcessStatus } from "./process-result.js";

export interface TaskProcessorDeps {
  store: ReflectionStore;
  answerEvaluator: AnswerEvaluator;
  observer?: QualityObserver;
  /** The reflection's named lifecycle, logged (generation, attempts, verdict, storage); absent: not logged. */
  lifecycle?: ReflectionLifecycle;
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
  /** The model judge (`REFLECTOR_JUDGE=model`); absent or null: the offline reading judges alone. */
  causeJudge?: CauseJudge | null;
  /** Whether the lessons a rerun carried helped (counted after the rerun commits); absent: not counted. */
  appliedOutcomes?: AppliedOutcomeStore;
  /** New lessons a tenant may store a minute; absent: no limit. */
  newLessons?: NewLessonLimit | undefined;
}

/**
 * One event through the pipeline's stages (`src/pipeline/stages/`): idempotency → evaluate the
 * answer → match a stored lesson → judge the recalled lesson again, or reflect and judge a new one
 * → the store's operation → decide the loop and persist → refresh the cache. Publishing and
 * committing offsets belong to the caller, which owns the Kafka side.
 */
export function createTaskProcessor(taskDeps: TaskProcessorDeps) {
  const deps = { ...taskDeps, memory: taskDeps.memory ?? defaultMemoryConfig };
  const { store, timer } = deps;

  /** The state an event starts its stages with, once it is known not to be committed yet. */
  function start(facts: EventFacts, sourceRecord: string | null, cached: EventState["cached"]): EventState {
    const { event } = facts;
    // The spend gate is asked once per event, and only when the event needs the model.
    let routed: Promise<"model" | "offline"> | null = null;
    const route = () =>
      (routed ??= deps.spend ? deps.spend.gate.admit(event.tenantId) : Promise.resolve("model"));
    // The loop context depends on the event alone, so it is read while the lesson is found rather
    // than after (one round trip less on the way): the family's earlier events have committed
    // before this one started, and the tenant's bias history is checked again by the commit.
    const loopContext = timer.time("store-read", () => store.loopContext(event));
    // Awaited when the loop is decided; a failure of the work before it must not leave it unhandled.
    loopContext.catch(() => undefined);
    return { facts, sourceRecord, now: deps.clock.now(), cached, loopContext, route, answerEvaluation: null };
  }

  const flights = createSignatureFlights();
  /** The match, holding its signature when the event is about to write its first lesson. */
  async function matchAlone(state: EventState) {
    for (;;) {
      const matched = await match(deps, state);
      if (!matched || matched.matched.known) return { matched, release: null };
      const release = await flights.claim(
        `${state.facts.event.tenantId}\u0000${matched.matched.candidate.signature}`,
      );
      if (release) return { matched, release };
    }
  }

  /**
   * @param sourceRecord the Kafka record (`topic/partition/offset`) the event was read from; it
   * decides whether an already committed event id publishes again (see `ProcessStatus`)
   * @param facts the event's facts when the caller derived them already (`factsOf`)
   */
  async function process(
    event: TaskCompleted,
    sourceRecord: string | null = null,
    facts: EventFacts = eventFacts(event, deps.mode),
  ): Promise<ProcessResult> {
    const { processed, cached } = await recall(deps, facts);
    if (processed) {
      await countCommittedOutcomes(deps, event, processed.outputs);
      return alreadyCommitted(processed.outputs, processed.sourceRecord, sourceRecord);
    }
    const state = await evaluateAnswer(deps, start(facts, sourceRecord, cached));
    const { matched, release } = await matchAlone(state);
    let persisted;
    try {
      const remembered = matched
        ? storeOperation(await limitNewLessons(deps, await reflect(deps, await rejudge(deps, matched))))
        : { ...state, memory: null };
      persisted = await decideAndPersist(deps, remembered);
    } finally {
      release?.();
    }
    const { result } = persisted;
    if (!result.committed) {
      await countCommittedOutcomes(deps, event, result.outputs);
      return alreadyCommitted(result.outputs, result.committedBy, sourceRecord);
    }
    return processedResult(await afterCommit(deps, persisted));
  }

  return {
    process,
    /** What the processor derives from an event before any I/O, for a caller to carry (`process`). */
    factsOf: (event: TaskCompleted): EventFacts => eventFacts(event, deps.mode),
  };
}

export type TaskProcessor = ReturnType<typeof createTaskProcessor>;
