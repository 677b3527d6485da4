import { createHashingEmbedder } from "../../src/adapters/embedding/hashing-embedder.js";
import { createHeuristicAnswerEvaluator } from "../../src/adapters/llm/heuristic-answer-evaluator.js";
import { createHeuristicGenerator } from "../../src/adapters/llm/heuristic-generator.js";
import { defaultGuardrailConfig } from "../../src/domain/guardrails/guardrail-config.js";
import { loopFamilyRoot } from "../../src/domain/guardrails/loop-family.js";
import { defaultQualityConfig } from "../../src/domain/quality/quality-config.js";
import { untimed } from "../../src/pipeline/stage-timer.js";
import { createTaskProcessor, type TaskProcessorDeps } from "../../src/pipeline/task-processor.js";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import {
  extractCommonIssues,
  lowQualityBelow,
  recentLowQualityLimit,
} from "../../src/domain/evaluation/adaptive-insights.js";
import { episodeMatchesPattern, patternKeywords } from "../../src/domain/quality/pattern-validity.js";
import type {
  CommitResult,
  ProcessedEvent,
  ReflectionStore,
  SignatureIndex,
  StoredReflection,
  UnitOfWork,
} from "../../src/pipeline/ports.js";

/** In-memory ReflectionStore for unit tests of the processor: same contract, no Postgres. */
export function createFakeStore() {
  const reflections = new Map<string, StoredReflection & { tenantId: string; embedding: number[] }>();
  /** tenant|signature → reflection id and the source vector of that signature's trace (merges). */
  const aliases = new Map<string, { reflectionId: string; sourceVector: number[] | null }>();
  const episodes: { tenantId: string; text: string }[] = [];
  const processed = new Map<string, ProcessedEvent>();
  const traces = new Map<
    string,
    UnitOfWork["loop"] & { tenantId: string; loopId: string; rerunOf?: string }
  >();
  const bias = new Map<string, number>();
  const judgements: (NonNullable<UnitOfWork["judgement"]> & { tenantId: string })[] = [];
  const answers: { tenantId: string; quality: number; issues: string[] }[] = [];
  const key = (...parts: string[]) => parts.join("|");
  let failCommits = 0;

  const store: ReflectionStore = {
    findProcessed: (tenantId, eventId) =>
      Promise.resolve(structuredClone(processed.get(key(tenantId, eventId)) ?? null)),
    findBySignature: (tenantId, signature) => {
      const own = [...reflections.values()].find((r) => r.tenantId === tenantId && r.signature === signature);
      const alias = own ? undefined : aliases.get(key(tenantId, signature));
      const found = own ?? (alias ? reflections.get(alias.reflectionId) : undefined);
      if (!found) return Promise.resolve(null);
      const { tenantId: _t, embedding: _e, ...stored } = found;
      return Promise.resolve({
        ...structuredClone(stored),
        signature,
        sourceVector: alias ? alias.sourceVector : (stored.sourceVector ?? null),
      });
    },
    // Like Postgres: the tenant's 50 episodes holding any of the pattern's keywords, counted by
    // the 70 % keyword rule (no text ranking here).
    patternEvidence: (tenantId, patterns) =>
      Promise.resolve(
        new Map(
          patterns.map((pattern) => {
            const words = patternKeywords(pattern);
            const retrieved = episodes
              .filter((e) => e.tenantId === tenantId && words.some((w) => e.text.toLowerCase().includes(w)))
              .slice(-50);
            const occurrences = retrieved.filter((e) => episodeMatchesPattern(e.text, pattern)).length;
            return [pattern, { occurrences, total: retrieved.length }];
          }),
        ),
      ),
    // Like Postgres' LIMIT: the most recently stored ones (no text ranking here).
    nearbyReflections: (tenantId, _text, limit) =>
      Promise.resolve(
        [...reflections.values()]
          .filter((r) => r.tenantId === tenantId)
          .slice(-limit)
          .map((r) => ({
            id: r.id,
            embedding: r.embedding,
            qualityScore: r.qualityScore,
            failingStep: r.reflection.attribution ?? null,
          })),
      ),
    loopContext: (event: TaskCompleted) => {
      const previous = event.rerunOf ? traces.get(key(event.tenantId, event.rerunOf)) : undefined;
      // Like Postgres: the reruns recorded in the family (the parent's root, else the id's rule).
      const root = previous?.rootLoopId ?? loopFamilyRoot(event);
      const familyReruns = [...traces.values()].filter(
        (t) =>
          t.tenantId === event.tenantId &&
          t.rootLoopId === root &&
          t.rerunOf !== undefined &&
          t.loopId !== event.loopId,
      ).length;
      return Promise.resolve({
        familyReruns,
        previous: previous
          ? {
              rootLoopId: previous.rootLoopId,
              rerunDepth: previous.rerunDepth,
              maxReruns: previous.maxReruns,
              alignment: previous.alignment,
              drift: previous.drift,
              fatigue: previous.fatigue,
            }
          : null,
        override: null,
        biasHistory: new Map(
          (event.biasTags ?? []).map((t) => [t.tag, bias.get(key(event.tenantId, t.tag)) ?? 0]),
        ),
      });
    },
    // The recent low-quality judgements and the recent low-quality answers, like Postgres.
    commonIssues: (tenantId) =>
      Promise.resolve(
        extractCommonIssues([
          ...judgements
            .filter((j) => j.tenantId === tenantId && j.qualityScore < lowQualityBelow)
            .slice(-recentLowQualityLimit)
            .map((j) => j.violations),
          ...answers
            .filter((a) => a.tenantId === tenantId && a.quality < lowQualityBelow)
            .slice(-recentLowQualityLimit)
            .map((a) => a.issues),
        ]),
      ),
    commit: (unit, outputs): Promise<CommitResult> => {
      if (failCommits > 0) {
        failCommits -= 1;
        return Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
      }
      const { event } = unit;
      const seen = processed.get(key(event.tenantId, event.eventId));
      if (seen)
        return Promise.resolve({
          committed: false,
          outputs: seen.outputs,
          occurrences: seen.occurrences,
          committedBy: seen.sourceRecord,
        });
      // Like Postgres: a decision made from bias counts another commit has moved since is
      // refused before anything is written, and the caller decides again.
      for (const [tag, count] of unit.loop.biasCounts) {
        if ((bias.get(key(event.tenantId, tag)) ?? 0) + 1 !== count) {
          return Promise.resolve({ committed: false, outputs: [], occurrences: null, staleLoopState: true });
        }
      }
      let occurrences: number | null = null;
      const ownLesson = (id: string) => {
        const found = reflections.get(id);
        return found?.tenantId === event.tenantId ? found : undefined;
      };
      if (unit.store?.kind === "insert") {
        const r = unit.store.reflection;
        // Like Postgres' unique (tenant, signature): a lesson another worker stored first under
        // the same signature is counted once more instead of stored twice.
        const existing =
          reflections.get(r.id) ??
          [...reflections.values()].find(
            (x) => x.tenantId === event.tenantId && x.signature === unit.signature,
          );
        if (existing) {
          existing.occurrences += 1;
          occurrences = existing.occurrences;
        } else {
          reflections.set(r.id, {
            tenantId: event.tenantId,
            id: r.id,
            signature: unit.signature ?? "",
            reflection: r.reflection,
            verdict: r.verdict,
            qualityScore: r.qualityScore,
            metrics: r.metrics,
            violations: r.violations,
            occurrences: 1,
            generator: r.generator,
            attempts: r.attempts,
            embedding: r.embedding,
            sourceVector: r.sourceVector,
          });
          occurrences = 1;
        }
      } else if (unit.store?.kind === "increment") {
        // Like the commit function: a lesson id of another tenant updates nothing.
        const existing = ownLesson(unit.store.reflectionId);
        if (existing) {
          existing.occurrences += 1;
          occurrences = existing.occurrences;
          if (unit.store.rejudged) Object.assign(existing, unit.store.rejudged);
        }
      } else if (unit.store?.kind === "merge") {
        const m = unit.store;
        const existing = ownLesson(m.reflectionId);
        if (existing) {
          existing.occurrences += 1;
          occurrences = existing.occurrences;
          if (!aliases.has(key(event.tenantId, m.signature)))
            aliases.set(key(event.tenantId, m.signature), {
              reflectionId: m.reflectionId,
              sourceVector: m.sourceVector,
            });
          const r = m.replacement;
          if (r)
            Object.assign(existing, {
              reflection: r.reflection,
              verdict: r.verdict,
              qualityScore: r.qualityScore,
              metrics: r.metrics,
              violations: r.violations,
              generator: r.generator,
              attempts: r.attempts,
              embedding: r.embedding,
            });
        }
      }
      episodes.push({ tenantId: event.tenantId, text: unit.episode });
      traces.set(key(event.tenantId, event.loopId), {
        ...unit.loop,
        tenantId: event.tenantId,
        loopId: event.loopId,
        ...(event.rerunOf !== undefined ? { rerunOf: event.rerunOf } : {}),
      });
      for (const tag of unit.loop.biasCounts.keys())
        bias.set(key(event.tenantId, tag), (bias.get(key(event.tenantId, tag)) ?? 0) + 1);
      // Like Postgres: a judgement is kept with its signature, an answer's evaluation with its question.
      if (unit.judgement && unit.signature) judgements.push({ ...unit.judgement, tenantId: event.tenantId });
      if (unit.answerEvaluation && event.task.query && event.task.answer)
        answers.push({
          tenantId: event.tenantId,
          quality: unit.answerEvaluation.quality,
          issues: unit.answerEvaluation.issues,
        });
      processed.set(key(event.tenantId, event.eventId), {
        outputs,
        occurrences,
        sourceRecord: unit.sourceRecord,
      });
      return Promise.resolve({ committed: true, outputs, occurrences });
    },
  };
  return {
    store,
    reflections,
    processed,
    traces,
    judgements,
    aliases,
    episodes,
    failNextCommits(n: number) {
      failCommits = n;
    },
    /** Sets a tenant's bias-tag history, as other families' commits would have left it. */
    seedBias(tenantId: string, tag: string, occurrences: number) {
      bias.set(key(tenantId, tag), occurrences);
    },
  };
}

/**
 * One part of a key: `|` and `%` percent-encoded, so that tenant `a|b` with event `c` and tenant `a`
 * with event `b|c` never share a key (as the Redis index encodes `:`). Ordinary ids are unchanged.
 */
const keyPart = (value: string) => value.replaceAll("%", "%25").replaceAll("|", "%7C");

/** In-memory SignatureIndex: the Redis index's contract (test/contract/signature-index.contract.ts). */
export function createFakeIndex() {
  const signatures = new Map<string, StoredReflection>();
  const events = new Set<string>();
  const key = (tenantId: string, part: string) => `${keyPart(tenantId)}|${keyPart(part)}`;
  // Copies in and out, as Redis' JSON does: a caller changing a lesson never changes the cache.
  const copy = (stored: StoredReflection | undefined) => (stored ? structuredClone(stored) : null);
  const index: SignatureIndex = {
    recall: (tenantId, eventId, signature) =>
      Promise.resolve({
        processed: events.has(key(tenantId, eventId)),
        cached: signature ? copy(signatures.get(key(tenantId, signature))) : null,
      }),
    cached: (tenantId, signature) => Promise.resolve(copy(signatures.get(key(tenantId, signature)))),
    remember: (tenantId, stored) => {
      signatures.set(key(tenantId, stored.signature), structuredClone(stored));
      return Promise.resolve();
    },
    markProcessed: (tenantId, eventId, stored) => {
      if (stored) signatures.set(key(tenantId, stored.signature), structuredClone(stored));
      events.add(key(tenantId, eventId));
      return Promise.resolve();
    },
  };
  const clear = () => {
    signatures.clear();
    events.clear();
  };
  return { index, signatures, events, clear };
}

/**
 * The processor with the offline adapters (heuristic generator and evaluator, hashing embedder)
 * over the given ports: what unit tests and the floor benchmark run without any I/O.
 */
export function createOfflineProcessor(
  ports: Pick<TaskProcessorDeps, "store" | "index">,
  overrides: Partial<TaskProcessorDeps> = {},
) {
  return createTaskProcessor({
    answerEvaluator: createHeuristicAnswerEvaluator(),
    generator: createHeuristicGenerator(),
    embedder: createHashingEmbedder(),
    clock: { now: () => new Date() },
    timer: untimed,
    quality: defaultQualityConfig,
    guardrails: defaultGuardrailConfig,
    mode: "full",
    ...ports,
    ...overrides,
  });
}
