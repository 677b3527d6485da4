import {
  groupForDreaming,
  groupText,
  minDreamGroupSize,
  sameSources,
  type DreamGroup,
} from "../domain/maintenance/dream-groups.js";
import { stableId } from "../domain/stable-id.js";
import { runImprovementLoop } from "../domain/quality/improvement-loop.js";
import { screenReflection } from "../domain/quality/lesson-screen.js";
import type { QualityConfig } from "../domain/quality/quality-config.js";
import { textFacts } from "../domain/quality/trace-facts.js";
import { decideVerdict, shouldStore } from "../domain/quality/validate-reflection.js";
import { createAttemptJudge } from "../pipeline/judge-reflection.js";
import type { Clock, Embedder } from "../pipeline/ports.js";
import type { MaintenanceStore, PatternGenerator } from "./maintenance-ports.js";

export interface DreamOptions {
  /** One tenant, or every tenant with high-importance reflections. */
  tenantId: string | null;
  minImportance: number;
  /** Most important sources read per tenant. */
  maxSources?: number;
  minGroupSize?: number;
  /** Report what would be (re)generated without calling the generator or writing. */
  dryRun: boolean;
}

export interface DreamGroupResult {
  tenantId: string;
  key: string;
  sources: number;
  status: "inserted" | "updated" | "unchanged" | "not_stored" | "would_generate";
  verdict?: string;
  qualityScore?: number;
  violations?: string[];
}

export interface DreamReport {
  generator: string;
  tenants: number;
  groups: DreamGroupResult[];
  inserted: number;
  updated: number;
  unchanged: number;
  notStored: number;
  wouldGenerate: number;
}

export interface DreamDeps {
  store: MaintenanceStore;
  generator: PatternGenerator;
  embedder: Embedder;
  quality: QualityConfig;
  clock: Clock;
}

/**
 * Dreaming (docs/specification.md#dreaming), per tenant: group the high-importance reflections,
 * write one pattern-level lesson per group, judge it exactly as the pipeline judges a lesson,
 * and store it when it passes the storage bar. A group whose stored pattern was drawn from the
 * same sources is skipped without a generator call, so running twice over the same inputs
 * writes nothing the second time.
 */
export async function runDream(deps: DreamDeps, options: DreamOptions): Promise<DreamReport> {
  const { store, generator, embedder, quality } = deps;
  const tenants = options.tenantId ? [options.tenantId] : await store.dreamTenants(options.minImportance);
  const results: DreamGroupResult[] = [];

  const dreamGroup = async (tenantId: string, group: DreamGroup): Promise<DreamGroupResult> => {
    const base = { tenantId, key: group.key, sources: group.sources.length };
    const text = groupText(group);
    const [taskVector] = await embedder.embed([text], tenantId);
    if (!taskVector) throw new Error("embedder returned no vector");
    const sourceIds = group.sources.map((s) => s.id);
    // The group's own stored pattern is the lesson being rewritten, not a repeat of it.
    const ownPattern = stableId("pattern", tenantId, group.key);
    const neighbours = (await store.nearbyEmbeddings(tenantId, text, [...sourceIds, ownPattern], 50)).map(
      (embedding) => ({
        embedding,
      }),
    );
    const judge = createAttemptJudge({
      tenantId,
      // A pattern lesson is about its group: the sources' text is what grounds it.
      trace: textFacts(text),
      taskVector,
      neighbours,
      patternEvidence: (patterns) => store.patternEvidence(tenantId, patterns),
      embedder,
      quality,
    });
    const outcome = await runImprovementLoop({
      // The heuristic synthesis ignores feedback: a second attempt would be the same text.
      maxAttempts: generator.name === "heuristic" ? 1 : quality.maxAttempts,
      generate: (attempt, feedback) =>
        generator.generate(group, attempt, feedback?.violations ?? [], feedback?.missingFields ?? []),
      evaluate: judge.evaluate,
    });
    const verdict = decideVerdict(outcome.validation, quality);
    const embedding = judge.embeddingOf(outcome.reflection);
    const judged = {
      verdict,
      qualityScore: outcome.validation.qualityScore,
      violations: outcome.validation.violations,
    };
    const at = deps.clock.now();
    if (verdict === "rejected" || !shouldStore(verdict, outcome.validation, quality)) {
      await store.recordJudgement({
        tenantId,
        group,
        ...judged,
        generator: generator.name,
        attempts: outcome.attempts,
        stored: false,
        at,
      });
      return { ...base, status: "not_stored", ...judged };
    }
    const status = await store.savePattern({
      tenantId,
      group,
      // Stored as judged: without the instructions the lesson screen refused.
      reflection: screenReflection(outcome.reflection).reflection,
      verdict,
      qualityScore: outcome.validation.qualityScore,
      metrics: outcome.validation.metrics,
      violations: outcome.validation.violations,
      generator: generator.name,
      attempts: outcome.attempts,
      embedding,
      embeddingModel: embedder.name,
      at,
    });
    return { ...base, status, ...judged };
  };

  for (const tenantId of tenants) {
    const sources = await store.dreamSources(tenantId, options.minImportance, options.maxSources ?? 500);
    const groups = groupForDreaming(sources, options.minGroupSize ?? minDreamGroupSize);
    const stored = await store.patternSources(tenantId);
    for (const group of groups) {
      const previous = stored.get(group.signature);
      if (previous && sameSources(group, previous)) {
        results.push({ tenantId, key: group.key, sources: group.sources.length, status: "unchanged" });
      } else if (options.dryRun) {
        results.push({ tenantId, key: group.key, sources: group.sources.length, status: "would_generate" });
      } else {
        results.push(await dreamGroup(tenantId, group));
      }
    }
  }

  const count = (status: DreamGroupResult["status"]) => results.filter((r) => r.status === status).length;
  return {
    generator: generator.name,
    tenants: tenants.length,
    groups: results,
    inserted: count("inserted"),
    updated: count("updated"),
    unchanged: count("unchanged"),
    notStored: count("not_stored"),
    wouldGenerate: count("would_generate"),
  };
}
