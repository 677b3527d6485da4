import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import { decideLoop } from "../../src/domain/guardrails/decide-loop.js";
import { defaultGuardrailConfig } from "../../src/domain/guardrails/guardrail-config.js";
import type {
  NewReflection,
  OutboundMessage,
  ReflectionStore,
  UnitOfWork,
} from "../../src/pipeline/ports.js";
import { taskEvent } from "../support/task-events.js";

/**
 * The ReflectionStore port's contract (src/pipeline/ports.ts), one suite for every implementation:
 * the in-memory fake of the unit tests and the Postgres store. `make` returns the store under
 * test; each case works in a tenant of its own, so a shared database needs no cleaning.
 */
export function reflectionStoreContract(
  name: string,
  make: () => ReflectionStore | Promise<ReflectionStore>,
) {
  const newTenant = () => `contract-${randomUUID().slice(0, 8)}`;
  let clock = Date.parse("2026-11-26T09:00:00Z");
  /** Each unit decided a second after the previous one: "most recent" has one meaning. */
  const nextDecision = () => new Date((clock += 1_000));

  const reflection = (text: string, id = randomUUID()): NewReflection => ({
    id,
    signatureType: "evaluation_error",
    reflection: {
      reflectionText: `${text}: the agent quoted a stale search snippet instead of opening the page.`,
      strategyText: `Open the source page before quoting a figure (${text}).`,
      importance: 0.4,
      confidence: 0.8,
      tags: ["verification"],
      errorCategory: "unverified_claim",
      patterns: ["stale search snippet"],
      adjustments: ["add constraint: open the source page"],
      learning: `Confirm figures on the source page (${text}).`,
    },
    verdict: "accepted",
    qualityScore: 0.9,
    metrics: {
      completeness: 1,
      depthScore: 0.8,
      actionabilityScore: 1,
      patternValidity: 0.75,
      relevanceScore: 0.9,
      noveltyScore: 0.7,
    },
    violations: [],
    generator: "heuristic",
    attempts: 1,
    embedding: [0.6, 0.8, 0],
    sourceVector: [1, 0, 0],
  });

  /** The outputs as the processor builds them: the outcome carries the count the write returned. */
  /** The outputs a commit is given, built before the count (the store stores them as they are). */
  const outputsFor = (event: TaskCompleted, deduplicated: boolean): OutboundMessage[] => [
    {
      role: "reflectionAccepted",
      key: event.loopId,
      id: `out-${event.eventId}`,
      type: "reflection.accepted",
      subject: event.loopId,
      time: "2026-11-26T09:00:00.000Z",
      value: { eventId: event.eventId, occurrences: 1, deduplicated },
    },
  ];

  interface Commit {
    signature?: string | null;
    op?: UnitOfWork["store"];
    episode?: string;
    judgement?: UnitOfWork["judgement"];
    answerEvaluation?: UnitOfWork["answerEvaluation"];
    sourceRecord?: string | null;
  }

  /** Commits `event` as the processor would: its loop decided from the store's own context. */
  async function commit(store: ReflectionStore, event: TaskCompleted, c: Commit = {}) {
    const loop = decideLoop(
      { event, ...(await store.loopContext(event)), answerNeedsRetry: false },
      defaultGuardrailConfig,
    );
    const op = c.op ?? null;
    return store.commit(
      {
        event,
        signature: c.signature === undefined ? "sig-default" : c.signature,
        store: op,
        loop,
        answerEvaluation: c.answerEvaluation ?? null,
        episode: c.episode ?? event.task.description,
        judgement: c.judgement ?? null,
        decidedAt: nextDecision(),
        sourceRecord: c.sourceRecord === undefined ? `in/0/${event.eventId}` : c.sourceRecord,
      },
      outputsFor(event, false),
    );
  }

  describe(`ReflectionStore contract: ${name}`, () => {
    it("knows nothing of a tenant it was never given", async () => {
      const store = await make();
      const tenantId = newTenant();
      const event = taskEvent({ tenantId });
      expect(await store.findProcessed(tenantId, event.eventId)).toBeNull();
      expect(await store.findBySignature(tenantId, "sig-a")).toBeNull();
      expect(await store.nearbyReflections(tenantId, "stale search snippet", 5)).toEqual([]);
      expect(await store.commonIssues(tenantId)).toEqual([]);
      const context = await store.loopContext(event);
      expect(context.previous).toBeNull();
      expect(context.override).toBeNull();
    });

    it("stores a new lesson once, and answers for its event id with the outputs it committed", async () => {
      const store = await make();
      const tenantId = newTenant();
      const event = taskEvent({ tenantId });
      const lesson = reflection("first");
      const result = await commit(store, event, {
        signature: "sig-a",
        op: { kind: "insert", reflection: lesson },
      });
      expect(result).toMatchObject({ committed: true, occurrences: 1 });
      expect(result.outputs).toEqual(outputsFor(event, false));
      expect(await store.findProcessed(tenantId, event.eventId)).toEqual({
        outputs: result.outputs,
        occurrences: 1,
        sourceRecord: `in/0/${event.eventId}`,
      });
      expect(await store.findBySignature(tenantId, "sig-a")).toMatchObject({
        id: lesson.id,
        signature: "sig-a",
        verdict: "accepted",
        qualityScore: 0.9,
        occurrences: 1,
        generator: "heuristic",
        attempts: 1,
        sourceVector: [1, 0, 0],
        reflection: {
          reflectionText: lesson.reflection.reflectionText,
          strategyText: lesson.reflection.strategyText,
          learning: lesson.reflection.learning,
          patterns: lesson.reflection.patterns,
        },
      });
    });

    it("commits an event id once: a second commit writes nothing and returns the first's outputs and record", async () => {
      const store = await make();
      const tenantId = newTenant();
      const event = taskEvent({ tenantId });
      const first = await commit(store, event, {
        signature: "sig-a",
        op: { kind: "insert", reflection: reflection("once") },
        sourceRecord: "in/0/7",
      });
      const again = await commit(store, event, {
        signature: "sig-a",
        op: { kind: "insert", reflection: reflection("twice") },
        sourceRecord: "in/1/9",
      });
      expect(again).toMatchObject({ committed: false, occurrences: 1, committedBy: "in/0/7" });
      expect(again.outputs).toEqual(first.outputs);
      expect(await store.findBySignature(tenantId, "sig-a")).toMatchObject({ occurrences: 1 });
    });

    it("counts a recurrence, and a lesson judged again keeps its new judgement", async () => {
      const store = await make();
      const tenantId = newTenant();
      const lesson = reflection("counted");
      await commit(store, taskEvent({ tenantId }), {
        signature: "sig-a",
        op: { kind: "insert", reflection: lesson },
      });
      const rejudged = {
        verdict: "accepted_with_warnings" as const,
        qualityScore: 0.7,
        metrics: { ...lesson.metrics, patternValidity: 0 },
        violations: ["Invalid pattern 'stale search snippet'"],
      };
      const second = taskEvent({ tenantId });
      const result = await commit(store, second, {
        signature: "sig-a",
        op: { kind: "increment", reflectionId: lesson.id, rejudged },
      });
      expect(result).toMatchObject({ committed: true, occurrences: 2 });
      expect(result.outputs).toEqual(outputsFor(second, false));
      expect(await store.findBySignature(tenantId, "sig-a")).toMatchObject({
        id: lesson.id,
        occurrences: 2,
        verdict: "accepted_with_warnings",
        qualityScore: 0.7,
        violations: rejudged.violations,
      });
    });

    it("an insert of a signature already stored counts the stored lesson once more (another worker's insert won)", async () => {
      const store = await make();
      const tenantId = newTenant();
      const winner = reflection("winner");
      await commit(store, taskEvent({ tenantId }), {
        signature: "sig-a",
        op: { kind: "insert", reflection: winner },
      });
      const late = taskEvent({ tenantId });
      const result = await commit(store, late, {
        signature: "sig-a",
        op: { kind: "insert", reflection: reflection("late") },
      });
      expect(result).toMatchObject({ committed: true, occurrences: 2 });
      expect(result.outputs).toEqual(outputsFor(late, false));
      expect(await store.findBySignature(tenantId, "sig-a")).toMatchObject({ id: winner.id, occurrences: 2 });
    });

    it("a merge makes the new signature lead to the lesson, with its own trace's vector and the replacing text", async () => {
      const store = await make();
      const tenantId = newTenant();
      const lesson = reflection("original");
      await commit(store, taskEvent({ tenantId }), {
        signature: "sig-a",
        op: { kind: "insert", reflection: lesson },
      });
      const replacement = reflection("better");
      const result = await commit(store, taskEvent({ tenantId }), {
        signature: "sig-b",
        op: {
          kind: "merge",
          reflectionId: lesson.id,
          signature: "sig-b",
          sourceVector: [0, 1, 0],
          replacement,
        },
      });
      expect(result).toMatchObject({ committed: true, occurrences: 2 });
      expect(await store.findBySignature(tenantId, "sig-b")).toMatchObject({
        id: lesson.id,
        signature: "sig-b",
        occurrences: 2,
        sourceVector: [0, 1, 0],
        reflection: { reflectionText: replacement.reflection.reflectionText },
      });
      expect(await store.findBySignature(tenantId, "sig-a")).toMatchObject({
        id: lesson.id,
        signature: "sig-a",
        sourceVector: [1, 0, 0],
        reflection: { reflectionText: replacement.reflection.reflectionText },
      });
    });

    it("keeps tenants apart: one tenant's events and lessons are invisible to another", async () => {
      const store = await make();
      const tenantId = newTenant();
      const other = newTenant();
      const event = taskEvent({ tenantId });
      await commit(store, event, {
        signature: "sig-a",
        op: { kind: "insert", reflection: reflection("mine") },
      });
      expect(await store.findProcessed(other, event.eventId)).toBeNull();
      expect(await store.findBySignature(other, "sig-a")).toBeNull();
      expect(await store.nearbyReflections(other, "stale search snippet", 5)).toEqual([]);
      // The same event id in another tenant is another event.
      const theirs = await commit(store, { ...event, tenantId: other }, { signature: "sig-a" });
      expect(theirs.committed).toBe(true);
    });

    it("an increment or a merge that names another tenant's lesson changes nothing of it", async () => {
      const store = await make();
      const owner = newTenant();
      const intruder = newTenant();
      const lesson = reflection("owned");
      await commit(store, taskEvent({ tenantId: owner }), {
        signature: "sig-a",
        op: { kind: "insert", reflection: lesson },
      });
      const rejudged = {
        verdict: "accepted_with_warnings" as const,
        qualityScore: 0.1,
        metrics: lesson.metrics,
        violations: ["x"],
      };
      await commit(store, taskEvent({ tenantId: intruder }), {
        signature: "sig-a",
        op: { kind: "increment", reflectionId: lesson.id, rejudged },
      });
      await commit(store, taskEvent({ tenantId: intruder }), {
        signature: "sig-b",
        op: {
          kind: "merge",
          reflectionId: lesson.id,
          signature: "sig-b",
          sourceVector: [0, 1, 0],
          replacement: reflection("poisoned"),
        },
      });
      expect(await store.findBySignature(owner, "sig-a")).toMatchObject({
        id: lesson.id,
        occurrences: 1,
        verdict: "accepted",
        reflection: { reflectionText: lesson.reflection.reflectionText },
      });
      expect(await store.findBySignature(owner, "sig-b")).toBeNull();
    });

    it("gives a rerun the loop it reruns, and counts the tenant's bias tags", async () => {
      const store = await make();
      const tenantId = newTenant();
      const first = taskEvent({ tenantId, biasTags: [{ tag: "anchoring" }] });
      await commit(store, first, { signature: null });
      const rerun = taskEvent({ tenantId, rerunOf: first.loopId, biasTags: [{ tag: "anchoring" }] });
      const context = await store.loopContext(rerun);
      expect(context.previous).toMatchObject({ rootLoopId: first.loopId, rerunDepth: 0 });
      expect(context.biasHistory.get("anchoring")).toBe(1);
      expect(context.biasHistory.get("recency") ?? 0).toBe(0);
    });

    it("counts the reruns already recorded in a loop's family, the loop itself excluded", async () => {
      const store = await make();
      const tenantId = newTenant();
      const root = taskEvent({ tenantId });
      await commit(store, root, { signature: null });
      const rerun = taskEvent({ tenantId, loopId: `${root.loopId}_r1`, rerunOf: root.loopId });
      expect((await store.loopContext(rerun)).familyReruns ?? 0).toBe(0);
      await commit(store, rerun, { signature: null });
      const again = taskEvent({ tenantId, loopId: `${root.loopId}_r2`, rerunOf: rerun.loopId });
      const context = await store.loopContext(again);
      expect(context.previous).toMatchObject({ rootLoopId: root.loopId, rerunDepth: 1 });
      expect(context.familyReruns ?? 0).toBe(1);
      // Asked again for a loop already recorded, its own trace does not count.
      expect((await store.loopContext(rerun)).familyReruns ?? 0).toBe(0);
    });

    it("answers loop contexts asked at once each as it answers them one at a time", async () => {
      const store = await make();
      const [one, other] = [newTenant(), newTenant()];
      const root = taskEvent({ tenantId: one, biasTags: [{ tag: "anchoring" }] });
      await commit(store, root, { signature: null });
      const rerun = taskEvent({ tenantId: one, loopId: `${root.loopId}_r1`, rerunOf: root.loopId });
      await commit(store, rerun, { signature: null });
      const asked = [
        taskEvent({
          tenantId: one,
          loopId: `${root.loopId}_r2`,
          rerunOf: rerun.loopId,
          biasTags: [{ tag: "anchoring" }],
        }),
        taskEvent({ tenantId: one }),
        // The same loop ids in another tenant: none of the first tenant's state.
        taskEvent({
          tenantId: other,
          loopId: `${root.loopId}_r2`,
          rerunOf: rerun.loopId,
          biasTags: [{ tag: "anchoring" }],
        }),
        taskEvent({
          tenantId: one,
          rerunOf: "unknown-loop",
          biasTags: [{ tag: "recency" }, { tag: "anchoring" }],
        }),
      ];
      const alone = [];
      for (const event of asked) alone.push(await store.loopContext(event));
      const together = await Promise.all(asked.map((event) => store.loopContext(event)));
      expect(together).toEqual(alone);
      expect(alone[0]).toMatchObject({
        previous: { rootLoopId: root.loopId, rerunDepth: 1 },
        familyReruns: 1,
      });
      expect(alone[0]?.biasHistory.get("anchoring")).toBe(1);
      expect(alone[2]).toMatchObject({ previous: null, familyReruns: 0 });
      expect(alone[2]?.biasHistory.get("anchoring") ?? 0).toBe(0);
    });

    it("refuses a decision made from bias counts that moved meanwhile: nothing is written, the caller decides again", async () => {
      const store = await make();
      const tenantId = newTenant();
      const biased = () => taskEvent({ tenantId, biasTags: [{ tag: "anchoring" }] });
      const [first, second] = [biased(), biased()];
      // Both decided from the same history (no anchoring yet); the first commits.
      const decided = async (event: TaskCompleted) =>
        decideLoop(
          { event, ...(await store.loopContext(event)), answerNeedsRetry: false },
          defaultGuardrailConfig,
        );
      const [loopOfFirst, staleLoop] = [await decided(first), await decided(second)];
      const unit = (event: TaskCompleted, loop: UnitOfWork["loop"]): UnitOfWork => ({
        event,
        signature: null,
        store: null,
        loop,
        answerEvaluation: null,
        episode: event.task.description,
        judgement: null,
        decidedAt: nextDecision(),
        sourceRecord: `in/0/${event.eventId}`,
      });
      expect(await store.commit(unit(first, loopOfFirst), outputsFor(first, false))).toMatchObject({
        committed: true,
      });
      const refused = await store.commit(unit(second, staleLoop), outputsFor(second, false));
      expect(refused).toMatchObject({ committed: false, staleLoopState: true });
      expect(await store.findProcessed(tenantId, second.eventId)).toBeNull();
      expect((await store.loopContext(second)).biasHistory.get("anchoring")).toBe(1);
      // Decided again from fresh state, it commits.
      expect(await commit(store, second, { signature: null })).toMatchObject({ committed: true });
      expect((await store.loopContext(biased())).biasHistory.get("anchoring")).toBe(2);
    });

    it("hands out the tenant's most recent lessons as neighbours, at most `limit`, with the failing step they blame", async () => {
      const store = await make();
      const tenantId = newTenant();
      const lessons = [reflection("one"), reflection("two"), reflection("three")];
      const blamed = lessons[2];
      if (!blamed) throw new Error("three lessons");
      blamed.reflection.attribution = {
        actor: "search-agent",
        toolName: "web_search",
        confidence: 0.8,
        stepIndex: 1,
        evidence: "it quoted the snippet",
      };
      for (const [i, lesson] of lessons.entries()) {
        await commit(store, taskEvent({ tenantId }), {
          signature: `sig-${String(i)}`,
          op: { kind: "insert", reflection: lesson },
        });
      }
      const near = await store.nearbyReflections(tenantId, "stale search snippet", 2);
      expect(near.map((n) => n.id).sort()).toEqual([lessons[1]?.id, blamed.id].sort());
      for (const n of near) expect(n).toMatchObject({ embedding: [0.6, 0.8, 0], qualityScore: 0.9 });
      expect(near.find((n) => n.id === blamed.id)?.failingStep).toMatchObject({
        actor: "search-agent",
        toolName: "web_search",
        confidence: 0.8,
      });
      expect(near.find((n) => n.id === lessons[1]?.id)?.failingStep ?? null).toBeNull();
    });

    it("counts a pattern's evidence over the tenant's episodes that hold its words", async () => {
      const store = await make();
      const tenantId = newTenant();
      const episodes = [
        "the agent quoted a stale search snippet as the answer",
        "a stale search snippet misled the agent about the price",
        "the database query timed out after thirty seconds",
      ];
      for (const episode of episodes) await commit(store, taskEvent({ tenantId }), { episode });
      const evidence = await store.patternEvidence(tenantId, ["stale search snippet", "quantum flux"]);
      expect(evidence.get("stale search snippet")).toEqual({ occurrences: 2, total: 2 });
      expect(evidence.get("quantum flux")).toEqual({ occurrences: 0, total: 0 });
      expect(
        (await store.patternEvidence(newTenant(), ["stale search snippet"])).get("stale search snippet"),
      ).toEqual({ occurrences: 0, total: 0 });
    });

    it("finds the issues common to the tenant's low-quality judgements and answers", async () => {
      const store = await make();
      const tenantId = newTenant();
      const judgement = {
        verdict: "rejected" as const,
        qualityScore: 0.3,
        violations: ["Missing root cause: the reflection names no cause"],
        generator: "heuristic" as const,
        attempts: 3,
        stored: false,
      };
      for (let i = 0; i < 2; i += 1) {
        await commit(store, taskEvent({ tenantId }), { signature: `sig-j${String(i)}`, judgement });
      }
      const answered = (n: number) =>
        taskEvent({
          tenantId,
          task: {
            description: "Quote the fare",
            goal: "Quote the fare",
            query: `fare ${String(n)}?`,
            answer: "$10",
          },
        });
      const evaluation = {
        evaluator: "heuristic" as const,
        quality: 0.2,
        confidence: 0.9,
        relevance: 0.3,
        completeness: 0.2,
        issues: ["Answer is incomplete: it skips the taxes"],
        improvements: [],
        shouldRetry: true,
      };
      for (let i = 0; i < 2; i += 1) {
        await commit(store, answered(i), { signature: `sig-e${String(i)}`, answerEvaluation: evaluation });
      }
      const issues = await store.commonIssues(tenantId);
      expect(issues).toEqual(
        expect.arrayContaining([
          { issue: "Missing root cause", count: 2 },
          { issue: "Answer is incomplete", count: 2 },
        ]),
      );
    });
  });
}
