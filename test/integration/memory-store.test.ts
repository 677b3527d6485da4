import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createPgMaintenanceStore } from "../../src/adapters/postgres/pg-maintenance-store.js";
import { createPgReflectionStore } from "../../src/adapters/postgres/pg-reflection-store.js";
import type { Reflection, TaskCompleted } from "../../src/domain/contracts/index.js";
import { decideLoop } from "../../src/domain/guardrails/decide-loop.js";
import { defaultGuardrailConfig } from "../../src/domain/guardrails/guardrail-config.js";
import { strategyImportance } from "../../src/domain/memory/strategy-importance.js";
import type { NewReflection, ReflectionStore, UnitOfWork } from "../../src/pipeline/ports.js";
import { taskEvent } from "../support/task-events.js";

/**
 * Memory's writes in Postgres, through the store the processor uses: a lesson keeps the vector
 * of its source trace, a merge makes the new signature an alias of the stored lesson (with its own
 * trace vector) and may replace its text, a recalled lesson judged again keeps its new verdict,
 * and pruning a lesson returns the signatures merged into it.
 */

let pool: pg.Pool;
let store: ReflectionStore;
const embeddingModel = "test-embedder";
beforeAll(() => {
  pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 2 });
  store = createPgReflectionStore(pool, { embeddingModel });
});
afterAll(async () => {
  await pool.end();
});

const lesson = (text: string): Reflection => ({
  reflectionText: `${text}: the agent assumed the first search snippet was current because it skipped the page.`,
  strategyText: `Open the source page before answering (${text}).`,
  importance: 0.2,
  confidence: 0.8,
  tags: ["verification"],
  errorCategory: "unverified_claim",
  patterns: ["answer from search snippet"],
  adjustments: ["add constraint: open the source page before answering"],
  learning: `Confirm figures on the source page (${text}).`,
});

function newReflection(id: string, text: string, sourceVector: number[]): NewReflection {
  return {
    id,
    signatureType: "evaluation_error",
    reflection: lesson(text),
    verdict: "accepted_with_warnings",
    qualityScore: 0.85,
    metrics: {
      completeness: 1,
      depthScore: 0.7,
      actionabilityScore: 1,
      patternValidity: 0,
      relevanceScore: 0.9,
      noveltyScore: 0.8,
    },
    violations: ["Invalid pattern 'answer from search snippet': confidence=0.00 < 0.75"],
    generator: "heuristic",
    attempts: 1,
    embedding: [0.6, 0.8, 0],
    sourceVector,
  };
}

async function commit(event: TaskCompleted, signature: string, op: UnitOfWork["store"]) {
  const loop = decideLoop(
    { event, ...(await store.loopContext(event)), answerNeedsRetry: false },
    defaultGuardrailConfig,
  );
  return store.commit(
    {
      event,
      signature,
      store: op,
      loop,
      answerEvaluation: null,
      episode: event.task.description,
      judgement: null,
      decidedAt: new Date(),
      sourceRecord: null,
    },
    [],
  );
}

describe("memory in Postgres", () => {
  it("resets a trusted lesson's feedback when a merge replaces its text", async () => {
    const tenantId = `memory-${randomUUID().slice(0, 8)}`;
    const event = (n: number) => taskEvent({ tenantId, eventId: `evt-${String(n)}-${randomUUID()}` });
    const id = randomUUID();
    await commit(event(1), "sig-trusted", {
      kind: "insert",
      reflection: newReflection(id, "trusted", [1, 0, 0]),
    });
    // Up-voted: trusted above its judged score.
    await pool.query(
      `UPDATE reflections SET effective_quality = 0.97, feedback_rating = 'up', helpful_count = 5 WHERE id = $1`,
      [id],
    );
    const incoming = newReflection(randomUUID(), "replacing", [0, 1, 0]);
    await commit(event(2), "sig-replacing", {
      kind: "merge",
      reflectionId: id,
      signature: "sig-replacing",
      sourceVector: [0, 1, 0],
      replacement: { ...incoming, qualityScore: 0.9 },
    });
    const after = await pool.query<{
      effective_quality: number | null;
      feedback_rating: string | null;
      helpful_count: number;
    }>(`SELECT effective_quality, feedback_rating, helpful_count FROM reflections WHERE id = $1`, [id]);
    expect(after.rows).toEqual([{ effective_quality: null, feedback_rating: null, helpful_count: 0 }]);
    // A merge that keeps the text (a recurrence) keeps the votes.
    await pool.query(`UPDATE reflections SET feedback_rating = 'up', helpful_count = 1 WHERE id = $1`, [id]);
    await commit(event(3), "sig-again", {
      kind: "merge",
      reflectionId: id,
      signature: "sig-again",
      sourceVector: [0, 0, 1],
      replacement: null,
    });
    const kept = await pool.query<{ helpful_count: number }>(
      `SELECT helpful_count FROM reflections WHERE id = $1`,
      [id],
    );
    expect(kept.rows[0]?.helpful_count).toBe(1);
  });

  it("stores a lesson with its source trace, merges another signature into it, and judges it again", async () => {
    const tenantId = `memory-${randomUUID().slice(0, 8)}`;
    const event = (n: number) => taskEvent({ tenantId, eventId: `evt-${String(n)}-${randomUUID()}` });
    const id = randomUUID();

    await commit(event(1), "sig-first", {
      kind: "insert",
      reflection: newReflection(id, "first", [1, 0, 0]),
    });
    const first = await store.findBySignature(tenantId, "sig-first");
    expect(first).toMatchObject({ id, signature: "sig-first", occurrences: 1, sourceVector: [1, 0, 0] });

    // A near-duplicate under another signature, better judged: its text replaces the stored one.
    const second = newReflection(randomUUID(), "second", [0, 1, 0]);
    // Rated more important than the first (0.2): the strategy's importance follows the replacement.
    const better = { ...second, qualityScore: 0.9, reflection: { ...second.reflection, importance: 0.3 } };
    const merged = await commit(event(2), "sig-second", {
      kind: "merge",
      reflectionId: id,
      signature: "sig-second",
      sourceVector: [0, 1, 0],
      replacement: better,
    });
    expect(merged.occurrences).toBe(2);
    const viaAlias = await store.findBySignature(tenantId, "sig-second");
    expect(viaAlias).toMatchObject({ id, signature: "sig-second", occurrences: 2, qualityScore: 0.9 });
    expect(viaAlias?.reflection.reflectionText).toMatch(/^second:/);
    // Each signature keeps the trace it came from: the gate compares a new trace with that one.
    expect(viaAlias?.sourceVector).toEqual([0, 1, 0]);
    expect((await store.findBySignature(tenantId, "sig-first"))?.sourceVector).toEqual([1, 0, 0]);
    const row = await pool.query<{ merged_signatures: string[]; strategy_text: string; importance: number }>(
      `SELECT r.merged_signatures, s.strategy_text, s.importance FROM reflections r
         JOIN strategies s ON s.reflection_id = r.id WHERE r.id = $1`,
      [id],
    );
    expect(row.rows.map((r) => ({ ...r, importance: Math.round(r.importance * 1e6) / 1e6 }))).toEqual([
      {
        merged_signatures: ["sig-second"],
        strategy_text: "Open the source page before answering (second).",
        // The replacement's strategy ranks by the domain's rule (stored as a real).
        importance: Math.round(strategyImportance(0.3) * 1e6) / 1e6,
      },
    ]);

    // Recalled with new evidence: the verdict it is judged again with is stored.
    const again = await commit(event(3), "sig-second", {
      kind: "increment",
      reflectionId: id,
      rejudged: {
        verdict: "accepted",
        qualityScore: 0.9,
        metrics: { ...better.metrics, patternValidity: 1 },
        violations: [],
      },
    });
    expect(again.occurrences).toBe(3);
    expect(await store.findBySignature(tenantId, "sig-first")).toMatchObject({
      verdict: "accepted",
      violations: [],
      occurrences: 3,
      metrics: { patternValidity: 1 },
    });

    // Vectors of another embedder are never compared.
    const other = createPgReflectionStore(pool, { embeddingModel: "another-embedder" });
    expect((await other.findBySignature(tenantId, "sig-second"))?.sourceVector).toBeNull();

    // Pruned, the lesson takes its merged signatures with it (for the cache to forget them).
    await pool.query(
      "UPDATE reflections SET first_seen_at = '2020-01-01', last_seen_at = '2020-01-01' WHERE id = $1",
      [id],
    );
    const maintenance = createPgMaintenanceStore(pool, store, embeddingModel);
    const pruned = await maintenance.prune({
      tenantId,
      cutoff: new Date("2021-01-01"),
      maxImportance: 0.3,
      dryRun: false,
    });
    expect(pruned.removed).toEqual(
      expect.arrayContaining([
        { tenantId, signature: "sig-first" },
        { tenantId, signature: "sig-second" },
      ]),
    );
    expect(await store.findBySignature(tenantId, "sig-second")).toBeNull();
  });
});

describe("group commit in Postgres", () => {
  it("gives merge candidates the failing step their lesson blames", async () => {
    const tenantId = `memory-${randomUUID().slice(0, 8)}`;
    const event = (n: number) => taskEvent({ tenantId, eventId: `evt-${String(n)}-${randomUUID()}` });
    const blamed = newReflection(randomUUID(), "blamed", [1, 0, 0]);
    blamed.reflection.attribution = {
      stepIndex: 2,
      actor: "WebSurfer",
      toolName: "web_search",
      confidence: 0.8,
    };
    const unblamed = newReflection(randomUUID(), "unblamed", [0, 1, 0]);
    await commit(event(1), "sig-blamed", { kind: "insert", reflection: blamed });
    await commit(event(2), "sig-unblamed", { kind: "insert", reflection: unblamed });
    const near = await store.nearbyReflections(tenantId, "search snippet source page", 10);
    expect(
      near.map(({ id, failingStep }) => ({ id, failingStep })).sort((a, b) => a.id.localeCompare(b.id)),
    ).toEqual(
      [
        { id: blamed.id, failingStep: { actor: "WebSurfer", toolName: "web_search", confidence: 0.8 } },
        { id: unblamed.id, failingStep: null },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  it("commits concurrent events in groups, a bad one alone failing, and the committing record kept", async () => {
    const tenantId = `group-${randomUUID().slice(0, 8)}`;
    const events = Array.from({ length: 12 }, (_, n) =>
      taskEvent({ tenantId, eventId: `evt-${String(n)}`, loopId: `loop-${String(n)}` }),
    );
    // Postgres refuses a NUL byte in jsonb text: the unit carrying one fails the group's statement.
    const bad = taskEvent({ tenantId, eventId: "evt-bad", loopId: "loop-bad" });
    const loopOf = async (event: TaskCompleted) =>
      decideLoop(
        { event, ...(await store.loopContext(event)), answerNeedsRetry: false },
        defaultGuardrailConfig,
      );
    const unit = (
      event: TaskCompleted,
      loop: Awaited<ReturnType<typeof loopOf>>,
      episode: string,
      sourceRecord: string,
    ) =>
      store.commit(
        {
          event,
          signature: null,
          store: null,
          loop,
          answerEvaluation: null,
          episode,
          judgement: null,
          decidedAt: new Date(),
          sourceRecord,
        },
        [],
      );
    const loops = await Promise.all([...events, bad].map(loopOf));
    const loopAt = (n: number) => {
      const loop = loops[n];
      if (!loop) throw new Error(`no loop ${String(n)}`);
      return loop;
    };
    // All in the same turn of the event loop: one group, which the bad unit's NUL byte fails as a
    // whole; its units are then committed one by one, and only the bad one fails.
    const results = await Promise.allSettled([
      ...events.map((e, n) => unit(e, loopAt(n), e.task.description, `in/0/${String(n)}`)),
      unit(bad, loopAt(12), "bad \u0000 episode", "in/0/99"),
    ]);
    const failed = results.filter((r) => r.status === "rejected");
    expect(failed).toHaveLength(1);
    expect(results.at(-1)?.status).toBe("rejected");
    expect(results.slice(0, -1).every((r) => r.status === "fulfilled" && r.value.committed)).toBe(true);
    const rows = await pool.query<{ event_id: string; source_record: string }>(
      "SELECT event_id, source_record FROM processed_events WHERE tenant_id = $1 ORDER BY source_record",
      [tenantId],
    );
    expect(rows.rows).toHaveLength(12);
    expect(rows.rows.find((r) => r.event_id === "evt-3")?.source_record).toBe("in/0/3");
    // The same event id again, from another record: not committed twice; who did it is reported.
    const again = await unit(events[3] ?? bad, loopAt(3), "again", "in/2/40");
    expect(again).toMatchObject({ committed: false, committedBy: "in/0/3" });
  });
});
