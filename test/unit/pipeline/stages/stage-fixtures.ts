import { createHashingEmbedder } from "../../../../src/adapters/embedding/hashing-embedder.js";
import { createHeuristicAnswerEvaluator } from "../../../../src/adapters/llm/heuristic-answer-evaluator.js";
import { createHeuristicGenerator } from "../../../../src/adapters/llm/heuristic-generator.js";
import type { TaskCompleted } from "../../../../src/domain/contracts/index.js";
import { defaultGuardrailConfig } from "../../../../src/domain/guardrails/guardrail-config.js";
import { defaultMemoryConfig } from "../../../../src/domain/memory/memory-config.js";
import { defaultQualityConfig } from "../../../../src/domain/quality/quality-config.js";
import { eventFacts } from "../../../../src/pipeline/event-facts.js";
import type { GenerationRequest, ReflectionGenerator } from "../../../../src/pipeline/ports.js";
import type { EventState, RememberedState } from "../../../../src/pipeline/processing-state.js";
import { match } from "../../../../src/pipeline/stages/match.js";
import { reflect } from "../../../../src/pipeline/stages/reflect.js";
import { rejudge } from "../../../../src/pipeline/stages/rejudge.js";
import { storeOperation } from "../../../../src/pipeline/stages/store-operation.js";
import { untimed, type StageTimer } from "../../../../src/pipeline/stage-timer.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../../support/fakes.js";

export const now = new Date("2026-11-20T10:00:05.000Z");

/** The stages' dependencies over the in-memory ports and the offline adapters, with what they saw. */
export function stageDeps(generator: ReflectionGenerator = createHeuristicGenerator()) {
  const fakeStore = createFakeStore();
  const fakeIndex = createFakeIndex();
  const generated: GenerationRequest[] = [];
  const stages: string[] = [];
  const timer: StageTimer = {
    time: (stage, work) => {
      stages.push(stage);
      return untimed.time(stage, work);
    },
  };
  const deps = {
    store: fakeStore.store,
    index: fakeIndex.index,
    embedder: createHashingEmbedder(),
    answerEvaluator: createHeuristicAnswerEvaluator(),
    generator: {
      name: generator.name,
      generate: (request: GenerationRequest) => {
        generated.push(request);
        return generator.generate(request);
      },
    } satisfies ReflectionGenerator,
    timer,
    quality: defaultQualityConfig,
    memory: defaultMemoryConfig,
    guardrails: defaultGuardrailConfig,
  };
  /** Processes an event whole (the composed stages), to leave its lesson in the store. */
  const seed = (event: TaskCompleted) =>
    createOfflineProcessor({ store: fakeStore.store, index: fakeIndex.index }).process(event);
  return { deps, fakeStore, fakeIndex, generated, stages, seed };
}

type Deps = ReturnType<typeof stageDeps>["deps"];

/** An event's state as the processor starts its stages with it (mode `full`, the model allowed). */
export function eventState(
  deps: Deps,
  event: TaskCompleted,
  overrides: Partial<EventState> = {},
): EventState {
  return {
    facts: eventFacts(event, "full"),
    sourceRecord: null,
    now,
    cached: null,
    loopContext: deps.store.loopContext(event),
    route: () => Promise.resolve("model"),
    answerEvaluation: null,
    ...overrides,
  };
}

/** The stages from "match" to "store operation", as the processor composes them. */
export async function remembered(deps: Deps, state: EventState): Promise<RememberedState> {
  const matched = await match(deps, state);
  return matched
    ? storeOperation(await reflect(deps, await rejudge(deps, matched)))
    : { ...state, memory: null };
}
