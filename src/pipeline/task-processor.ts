import type { LoopDecision, TaskCompleted, Verdict } from "../domain/contracts/index.js";
import type { AppliedOutcomeStore } from "../domain/feedback/applied-outcome.js";
import type { GuardrailConfig } from "../domain/guardrails/guardrail-config.js";
import { defaultMemoryConfig, type MemoryConfig } from "../domain/memory/memory-config.js";
import type { QualityConfig } from "../domain/quality/quality-config.js";
import type { ReflectionMode } from "../domain/select-for-reflection.js";
import { eventFacts } from "./event-facts.js";
import type {
  AnswerEvaluator,
  Clock,
  Embedder,
  OutboundMessage,
  ReflectionGenerator,
  ReflectionStore,
  SignatureIndex,
  SpendGate,
} from "./ports.js";
import type { EventFacts, EventState, PersistedState } from "./processing-state.js";
import { afterCommit } from "./stages/after-commit.js";
import { decideAndPersist } from "./stages/decide-and-persist.js";
import { evaluateAnswer } from "./stages/evaluate-answer.js";
import { match } from "./stages/match.js";
import { reflect, type QualityObserver } from "./stages/reflect.js";
import { rejudge } from "./stages/rejudge.js";
import { storeOperation } from "./stages/store-operation.js";
import type { StageTimer } from "./stage-timer.js";

export type { QualityObserver };

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
 * One event through the pipeline's stages (`src/pipeline/stages/`): idempotency → evaluate the
 * answer → match a stored lesson → judge the recalled lesson again, or reflect and judge a new one
 * → the store's operation → decide the loop and persist → refresh the cache. Publishing and
 * committing offsets belong to the caller, which owns the Kafka side.
 */
export function createTaskProcessor(taskDeps: TaskProcessorDeps) {
  const deps = { ...taskDeps, memory: taskDeps.memory ?? defaultMemoryConfig };
  const { store, index, timer } = deps;

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
    // The first signature's cached lesson comes with the processed check: one Redis round trip.
    const recalled = await timer.time("index", () =>
      index.recall(event.tenantId, event.eventId, facts.candidates[0]?.signature ?? null),
    );
    if (recalled.processed) {
      const processed = await store.findProcessed(event.tenantId, event.eventId);
      if (processed) return alreadyCommitted(processed.outputs, processed.sourceRecord, sourceRecord);
    }
    const state = await evaluateAnswer(deps, start(facts, sourceRecord, recalled.cached));
    const matched = await match(deps, state);
    const remembered = matched
      ? storeOperation(await reflect(deps, await rejudge(deps, matched)))
      : { ...state, memory: null };
    const persisted = await decideAndPersist(deps, remembered);
    const { result } = persisted;
    if (!result.committed) return alreadyCommitted(result.outputs, result.committedBy, sourceRecord);
    return processed(await afterCommit(deps, persisted));
  }

  return {
    process,
    /** What the processor derives from an event before any I/O, for a caller to carry (`process`). */
    factsOf: (event: TaskCompleted): EventFacts => eventFacts(event, deps.mode),
  };
}

function processed({ memory, result, loop }: PersistedState): ProcessResult {
  const { judged, rejudged, matched } = memory ?? {};
  return {
    status: "processed",
    outputs: result.outputs,
    verdict: judged?.verdict ?? rejudged?.verdict ?? matched?.known?.verdict ?? null,
    decision: loop.decision,
    generatorCalls: judged?.attempts ?? 0,
  };
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

export type TaskProcessor = ReturnType<typeof createTaskProcessor>;
