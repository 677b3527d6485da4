import type { Tracer } from "@opentelemetry/api";
import { createHeuristicAnswerEvaluator } from "../adapters/llm/heuristic-answer-evaluator.js";
import { createHeuristicGenerator } from "../adapters/llm/heuristic-generator.js";
import { createPgFeedbackStore } from "../adapters/postgres/pg-feedback-store.js";
import { createPgLessonRetrievals } from "../adapters/postgres/pg-lesson-retrievals.js";
import { createRedisSignatureIndex } from "../adapters/redis/redis-signature-index.js";
import { redisNewLessonLimit } from "../adapters/redis/tenant-volume-limit.js";
import type { buildPostgresPool, buildRedis, Llm } from "./builders.js";
import type { Config } from "../config/config.js";
import type { GuardrailConfig } from "../domain/guardrails/guardrail-config.js";
import { countAppliedOutcomes } from "../observability/applied-outcome-metrics.js";
import type { Metrics } from "../observability/metrics.js";
import type { Logger } from "../observability/logger.js";
import { createQualityMetrics } from "../observability/quality-metrics.js";
import { createReflectionLog } from "../observability/reflection-log.js";
import { countRefusedNewLessons } from "../observability/tenant-limit-metrics.js";
import { withSpans } from "../observability/traced-stage-timer.js";
import type { Clock, ReflectionGenerator, ReflectionStore, SpendGate } from "../pipeline/ports.js";
import { createTaskProcessor, type TaskProcessor } from "../pipeline/task-processor.js";
import { buildQualityConfig } from "./quality-config.js";

export interface TaskProcessorDeps {
  pool: ReturnType<typeof buildPostgresPool>;
  redis: ReturnType<typeof buildRedis>;
  store: ReflectionStore;
  llm: Llm;
  generator: ReflectionGenerator;
  /** The tenants' token budget: over it, the offline generator and evaluator stand in. */
  budget: SpendGate | null;
  guardrails: GuardrailConfig;
  metrics: Metrics;
  clock: Clock;
  tracer?: Tracer | undefined;
  /** Where the reflection lifecycle's named events are logged; absent: not logged. */
  logger?: Logger;
}

/** The processor of task events over the stores, the signature cache and the LLM adapters. */
export function buildTaskProcessor(config: Config, deps: TaskProcessorDeps): TaskProcessor {
  const { metrics, budget } = deps;
  return createTaskProcessor({
    store: deps.store,
    answerEvaluator: deps.llm.answerEvaluator,
    observer: createQualityMetrics(metrics.registry, metrics.qualityScore),
    ...(deps.logger ? { lifecycle: createReflectionLog(deps.logger) } : {}),
    index: createRedisSignatureIndex(deps.redis, { keyPrefix: config.redis.keyPrefix }),
    generator: deps.generator,
    causeJudge: deps.llm.causeJudge,
    embedder: deps.llm.embedder,
    clock: deps.clock,
    timer: deps.tracer ? withSpans(metrics.timer, deps.tracer) : metrics.timer,
    quality: buildQualityConfig(config),
    guardrails: deps.guardrails,
    mode: config.mode,
    memory: config.memory,
    newLessons: redisNewLessonLimit(
      deps.redis,
      { keyPrefix: config.redis.keyPrefix, perMinute: config.tenancy.newLessonsPerMinute },
      countRefusedNewLessons(metrics.registry),
    ),
    // A task's outcome counts for or against the lessons its parent's decision carried and those
    // it retrieved for its loop id (written by lessons-for-task).
    appliedOutcomes: countAppliedOutcomes(
      {
        ...createPgFeedbackStore(deps.pool),
        lessonsRetrievedBy: createPgLessonRetrievals(deps.pool).lessonsRetrievedBy,
      },
      metrics.registry,
    ),
    ...(budget
      ? {
          spend: {
            gate: budget,
            generator: createHeuristicGenerator(config.heuristicPacks),
            answerEvaluator: createHeuristicAnswerEvaluator(),
          },
        }
      : {}),
  });
}
