import { readFile } from "node:fs/promises";
import { z } from "zod";
import { buildLlm } from "../composition/builders.js";
import { buildQualityConfig } from "../composition/quality-config.js";
import { ReflectorError } from "../domain/errors.js";
import { ConfigError, loadConfig } from "../config/config.js";
import type { MemoryConfig } from "../domain/memory/memory-config.js";
import type { QualityConfig } from "../domain/quality/quality-config.js";
import { attributeFailure } from "../domain/attribution/attribute-failure.js";
import { TaskCompletedV1, type Reflection, type TaskCompleted } from "../domain/contracts/index.js";
import { mapTraceToTask } from "../domain/otlp/map-trace.js";
import { parseOtlpTraceRequest, type OtlpSpan } from "../domain/otlp/otlp-span.js";
import { selectForReflection } from "../domain/select-for-reflection.js";
import { scoreReflection } from "./score.js";

/**
 * `reflector reflect FILE`: one trace in (an `agent.task.completed` event, or an OTLP/JSON trace
 * export), its attribution, lesson and verdict out, as the processor would produce them — with no
 * Kafka, database or Redis. The generator is the configured one: the offline generator unless
 * `REFLECTOR_GENERATOR=openai` names a model (`REFLECTOR_MODEL`, with `OPENAI_API_KEY` and/or an
 * OpenAI-compatible `OPENAI_BASE_URL`).
 */

export class ReflectInputError extends Error {}

const mapping = {
  tenantAttribute: "reflector.tenant_id",
  projectAttribute: "reflector.project_id",
  defaultTenant: "local",
  defaultProject: "local",
};

/** The task events of a file: the event itself, or one per trace of an OTLP/JSON export. */
export function tasksOfFile(text: string, name: string): TaskCompleted[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ReflectInputError(`${name} is not JSON: ${(err as Error).message}`);
  }
  if (json !== null && typeof json === "object" && "resourceSpans" in json) {
    const parsed = parseOtlpTraceRequest(json, { uniqueResourceKeys: [mapping.tenantAttribute] });
    if (!parsed.ok)
      throw new ReflectInputError(`${name} is not a valid OTLP/JSON trace export: ${parsed.reason}`);
    const byTrace = new Map<string, OtlpSpan[]>();
    for (const span of parsed.spans) byTrace.set(span.traceId, [...(byTrace.get(span.traceId) ?? []), span]);
    if (byTrace.size === 0) throw new ReflectInputError(`${name} holds no spans`);
    return [...byTrace].map(([traceId, spans]) => {
      const mapped = mapTraceToTask(spans, mapping);
      if (!mapped.ok)
        throw new ReflectInputError(`trace ${traceId} of ${name} cannot be read: ${mapped.reason}`);
      return mapped.event;
    });
  }
  // The examples/ files: `{ name, summary, events: [task events] }`.
  const listed = (json as { schemaVersion?: unknown; events?: unknown } | null)?.events;
  if ((json as { schemaVersion?: unknown } | null)?.schemaVersion === undefined && Array.isArray(listed)) {
    return listed.map((candidate, i) => {
      const parsed = TaskCompletedV1.safeParse(candidate);
      if (!parsed.success) {
        throw new ReflectInputError(
          `event ${String(i)} of ${name} is not valid:\n${z.prettifyError(parsed.error)}`,
        );
      }
      return parsed.data;
    });
  }
  const event = TaskCompletedV1.safeParse(json);
  if (!event.success) {
    throw new ReflectInputError(
      `${name} is neither an agent.task.completed event nor an OTLP/JSON export (resourceSpans):\n${z.prettifyError(event.error)}`,
    );
  }
  return [event.data];
}

export interface ReflectDeps {
  generator: { name: string; generate: ReturnType<typeof buildLlm>["generator"]["generate"] };
  embedder: ReturnType<typeof buildLlm>["embedder"];
  maxAttempts: number;
  /** The judge's configuration (buildQualityConfig); the defaults when absent. */
  quality?: QualityConfig;
  memory?: MemoryConfig;
  /** The model judge (`REFLECTOR_JUDGE=model`); absent: the offline reading alone. */
  causeJudge?: ReturnType<typeof buildLlm>["causeJudge"];
}

const verdictRank = { accepted: 2, accepted_with_warnings: 1, rejected: 0 } as const;

/** The attempt to report: a better verdict first (an accepted later attempt beats a rejected first), then the score. */
function better(
  a: { verdict: keyof typeof verdictRank; qualityScore: number },
  b: { verdict: keyof typeof verdictRank; qualityScore: number },
): boolean {
  const rank = verdictRank[a.verdict] - verdictRank[b.verdict];
  return rank !== 0 ? rank > 0 : a.qualityScore > b.qualityScore;
}

/** One task's attribution, lesson and verdict (the improvement loop: attempts fix the judge's violations). */
export async function reflectOn(event: TaskCompleted, deps: ReflectDeps) {
  const selection = selectForReflection(event, "full");
  const base = { eventId: event.eventId, loopId: event.loopId, outcome: event.outcome };
  if (!selection.reflect) return { ...base, reflected: false, reason: selection.reason };
  const attribution = attributeFailure(event) ?? null;
  let violations: string[] = [];
  let missingFields: string[] = [];
  let best: {
    reflection: Reflection;
    judged: Awaited<ReturnType<typeof scoreReflection>>;
    attempt: number;
  } | null = null;
  for (let attempt = 1; attempt <= deps.maxAttempts; attempt += 1) {
    const reflection = await deps.generator.generate({
      event,
      attempt,
      violations,
      missingFields,
      insights: [],
      answerEvaluation: null,
    });
    const judged = await scoreReflection(
      { reflection: { ...reflection, strategyText: reflection.strategyText ?? null }, event },
      {
        embedder: deps.embedder,
        history: null,
        quality: deps.quality,
        memory: deps.memory,
        causeJudge: deps.causeJudge ?? null,
      },
    );
    if (best === null || better(judged, best.judged)) best = { reflection, judged, attempt };
    // Stored, or final (a quarantined lesson is not asked again): no further attempt.
    if (judged.verdict !== "rejected" || !judged.retryable) break;
    violations = judged.violations;
    missingFields = judged.missingFields;
  }
  if (best === null) throw new Error("no attempt was made");
  const { reflection, judged } = best;
  return {
    ...base,
    reflected: true,
    reason: selection.reason,
    attribution: reflection.attribution ?? attribution,
    lesson: {
      reflectionText: reflection.reflectionText,
      strategyText: reflection.strategyText,
      adjustments: reflection.adjustments,
      learning: reflection.learning,
      patterns: reflection.patterns,
      tags: reflection.tags,
      importance: reflection.importance,
      confidence: reflection.confidence,
    },
    verdict: judged.verdict,
    qualityScore: judged.qualityScore,
    wouldStore: judged.wouldStore,
    violations: judged.violations,
    generator: deps.generator.name,
    attempts: best.attempt,
  };
}

/** Exit 0 reflected, 1 the model or another dependency failed, 2 bad input or configuration. */
export async function runReflectCommand(file: string): Promise<number> {
  let tasks: TaskCompleted[];
  try {
    tasks = tasksOfFile(await readFile(file, "utf8"), file);
  } catch (err) {
    if (err instanceof ReflectInputError || (err as NodeJS.ErrnoException).code === "ENOENT") {
      process.stderr.write(`reflector reflect: ${(err as Error).message}\n`);
      return 2;
    }
    throw err;
  }
  try {
    const config = loadConfig(process.env);
    const { generator, embedder, causeJudge } = buildLlm(config);
    const quality = buildQualityConfig(config);
    const deps = {
      generator,
      embedder,
      causeJudge,
      maxAttempts: quality.maxAttempts,
      quality,
      memory: config.memory,
    };
    const results = [];
    for (const event of tasks) results.push(await reflectOn(event, deps));
    process.stdout.write(`${JSON.stringify(results.length === 1 ? results[0] : results, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`reflector reflect: ${err.message}\n`);
      return 2;
    }
    // The embedding model not fetched yet, the model endpoint down or refusing: a line that says
    // what to do, not a stack trace.
    if (err instanceof ReflectorError) {
      process.stderr.write(`reflector reflect: ${err.code}: ${err.message}\n`);
      return err.code === "CONFIG_INVALID" ? 2 : 1;
    }
    throw err;
  }
}
