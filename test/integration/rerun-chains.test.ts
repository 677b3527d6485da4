import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoopDecisionV1, type LoopDecision, type TaskCompleted } from "../../src/domain/contracts/index.js";
import { createPgReflectionStore } from "../../src/adapters/postgres/pg-reflection-store.js";
import { decideLoop } from "../../src/domain/guardrails/decide-loop.js";
import { defaultGuardrailConfig } from "../../src/domain/guardrails/guardrail-config.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

/**
 * The loop guardrails walked through Kafka as an agent would: publish a loop's completion,
 * wait for its `loop.decision`, and when told to rerun, publish the rerun under the `newLoopId`
 * the decision named (with `rerunOf` pointing at the loop it reruns).
 */

interface Step {
  alignment: number;
  drift: number;
  biasTags?: string[];
}

const harnesses: Harness[] = [];
afterAll(async () => {
  for (const h of harnesses) await h.close();
});

function newTenant(): { tenantId: string; apiKey: string } {
  const id = randomUUID().slice(0, 8);
  return { tenantId: `chains-${id}`, apiKey: `key-chains-${id}` };
}

function completion(
  tenantId: string,
  loopId: string,
  rerunOf: string | undefined,
  step: Step,
): TaskCompleted {
  return taskEvent({
    tenantId,
    loopId,
    ...(rerunOf ? { rerunOf } : {}),
    outcome: "partial",
    scores: { alignment: step.alignment, drift: step.drift },
    ...(step.biasTags ? { biasTags: step.biasTags.map((tag) => ({ tag })) } : {}),
  });
}

async function decisionFor(h: Harness, eventId: string): Promise<LoopDecision> {
  const found = await waitFor(
    () => h.on(h.config.topics.loopDecision, (c) => c.value?.sourceEventId === eventId)[0],
    { timeoutMs: 60_000, what: `the loop decision for ${eventId}` },
  );
  return LoopDecisionV1.parse(found.value);
}

/**
 * Walks a chain: one step per loop, following the decisions. Stops at the first decision that is
 * not a rerun; `beforeStep` runs before each loop is published (an operator acting mid-chain).
 */
async function walk(
  h: Harness,
  tenantId: string,
  root: string,
  steps: Step[],
  beforeStep?: (loopId: string, index: number) => Promise<void>,
): Promise<LoopDecision[]> {
  const decisions: LoopDecision[] = [];
  let loopId = root;
  let rerunOf: string | undefined;
  for (const [index, step] of steps.entries()) {
    await beforeStep?.(loopId, index);
    const event = completion(tenantId, loopId, rerunOf, step);
    await h.publish(event);
    const decision = await decisionFor(h, event.eventId);
    decisions.push(decision);
    if (decision.decision !== "rerun") break;
    expect(decision.newLoopId, "a rerun names the loop to run next").not.toBeNull();
    rerunOf = loopId;
    loopId = decision.newLoopId ?? "";
  }
  return decisions;
}

const pick = (d: LoopDecision) => ({
  loopId: d.loopId,
  decision: d.decision,
  newLoopId: d.newLoopId,
  rerunCount: d.rerunCount,
  reason: d.reason,
  fatigue: d.fatigue,
  forceFinalize: d.forceFinalize,
  overriddenBy: d.overriddenBy,
});

describe("rerun chains through Kafka, default guardrails (3 reruns, 0.75 / 0.25)", () => {
  let h: Harness;
  const { tenantId, apiKey } = newTenant();

  beforeAll(async () => {
    h = await startHarness({ env: { API_KEYS: `${apiKey}:${tenantId}:read+vote+decide+override` } });
    harnesses.push(h);
  });

  it("stops a chain at the rerun limit: root + 3 reruns, the 4th loop is finalized", async () => {
    const root = `limit-${h.id}`;
    // Alignment improves by 0.06 each time: the chain never tires, only the limit stops it.
    const steps = [0.5, 0.56, 0.62, 0.68, 0.74].map((alignment) => ({ alignment, drift: 0.3 }));
    const decisions = await walk(h, tenantId, root, steps);
    expect(decisions.map(pick)).toEqual([
      {
        loopId: root,
        decision: "rerun",
        newLoopId: `${root}_r1`,
        rerunCount: 1,
        reason: "alignment_threshold_not_met",
        fatigue: 0,
        forceFinalize: false,
        overriddenBy: null,
      },
      {
        loopId: `${root}_r1`,
        decision: "rerun",
        newLoopId: `${root}_r2`,
        rerunCount: 2,
        reason: "alignment_threshold_not_met",
        fatigue: 0,
        forceFinalize: false,
        overriddenBy: null,
      },
      {
        loopId: `${root}_r2`,
        decision: "rerun",
        newLoopId: `${root}_r3`,
        rerunCount: 3,
        reason: "alignment_threshold_not_met",
        fatigue: 0,
        forceFinalize: false,
        overriddenBy: null,
      },
      {
        loopId: `${root}_r3`,
        decision: "finalize",
        newLoopId: null,
        rerunCount: 3,
        reason: "max_reruns_reached",
        fatigue: 0,
        forceFinalize: true,
        overriddenBy: null,
      },
    ]);
    for (const d of decisions) {
      expect(d.rootLoopId).toBe(root);
      expect(d.maxReruns).toBe(3);
      expect(d.triggers).toEqual(["alignment", "drift"]);
      expect(d.fatigueIncreased).toBe(false);
    }
    expect(decisions[0]?.reasonDetail).toBe("alignment 0.5 < 0.75; drift 0.3 > 0.25");
    expect(decisions[3]?.reasonDetail).toMatch(
      /^3 of 3 reruns used; wanted a rerun because alignment 0.68 < 0.75/,
    );

    // The loop trace holds the same story.
    const traces = await h.pool.query<{
      loop_id: string;
      rerun_of: string | null;
      rerun_depth: number;
      decision: string;
    }>(
      `SELECT loop_id, rerun_of, rerun_depth, decision FROM loop_traces
        WHERE tenant_id = $1 AND root_loop_id = $2 ORDER BY rerun_depth`,
      [tenantId, root],
    );
    expect(traces.rows).toEqual([
      { loop_id: root, rerun_of: null, rerun_depth: 0, decision: "rerun" },
      { loop_id: `${root}_r1`, rerun_of: root, rerun_depth: 1, decision: "rerun" },
      { loop_id: `${root}_r2`, rerun_of: `${root}_r1`, rerun_depth: 2, decision: "rerun" },
      { loop_id: `${root}_r3`, rerun_of: `${root}_r2`, rerun_depth: 3, decision: "finalize" },
    ]);
  });

  it("finalizes a loop that meets both thresholds, with the reason recorded", async () => {
    const root = `good-${h.id}`;
    const [decision] = await walk(h, tenantId, root, [{ alignment: 0.75, drift: 0.25 }]);
    expect(decision).toMatchObject({
      decision: "finalize",
      reason: "thresholds_met",
      reasonDetail: "alignment 0.75 and drift 0.25 are within thresholds",
      triggers: [],
      rerunCount: 0,
      forceFinalize: false,
    });
  });

  it("halts a chain on bias echo once a tag's recorded occurrences reach 3", async () => {
    const root = `bias-${h.id}`;
    const steps: Step[] = [
      { alignment: 0.5, drift: 0.5, biasTags: ["confirmation_bias"] },
      { alignment: 0.6, drift: 0.4, biasTags: ["confirmation_bias"] },
      { alignment: 0.7, drift: 0.3, biasTags: ["confirmation_bias", "anchoring"] },
      { alignment: 0.8, drift: 0.2 },
    ];
    const decisions = await walk(h, tenantId, root, steps);
    expect(decisions.map((d) => [d.loopId, d.decision, d.biasEcho, d.repeatedTags, d.reason])).toEqual([
      [root, "rerun", false, [], "alignment_threshold_not_met"],
      [`${root}_r1`, "rerun", false, [], "alignment_threshold_not_met"],
      [`${root}_r2`, "halt", true, ["confirmation_bias"], "bias_echo_detected"],
    ]);
    const halt = decisions[2];
    expect(halt?.newLoopId).toBeNull();
    expect(halt?.triggers).toContain("pessimist");
    expect(halt?.reasonDetail).toBe("bias tags raised 3+ times: confirmation_bias");
    const history = await h.pool.query<{ tag: string; occurrences: number; last_loop_id: string }>(
      "SELECT tag, occurrences, last_loop_id FROM bias_tag_history WHERE tenant_id = $1 ORDER BY tag",
      [tenantId],
    );
    expect(history.rows).toEqual([
      { tag: "anchoring", occurrences: 1, last_loop_id: `${root}_r2` },
      { tag: "confirmation_bias", occurrences: 3, last_loop_id: `${root}_r2` },
    ]);
  });

  it("lets an overridden chain pass the limit (HTTP override on the root) and fatigue (override on one loop)", async () => {
    const root = `override-${h.id}`;
    const override = async (loopId: string, body: Record<string, unknown>) => {
      const res = await h.app.http.inject({
        method: "POST",
        url: `/orchestrator/override-guardrails/${loopId}`,
        headers: { authorization: `Bearer ${apiKey}` },
        payload: body,
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    // The operator lifts the rerun limit for the whole family before the loop starts.
    await override(root, {
      override_fatigue: false,
      override_max_reruns: true,
      override_by: "operator",
      override_reason: "exploration run",
    });
    // No rerun improves: fatigue grows 0.15 per rerun.
    const stale = { alignment: 0.6, drift: 0.4 };
    const decisions = await walk(
      h,
      tenantId,
      root,
      Array.from({ length: 8 }, () => stale),
      async (loopId) => {
        // Before the 5th loop runs, an SRE also lifts fatigue for that loop only.
        if (loopId === `${root}_r4`) {
          await override(loopId, { override_fatigue: true, override_max_reruns: true, override_by: "sre" });
        }
      },
    );
    expect(decisions.map(pick)).toEqual([
      {
        loopId: root,
        decision: "rerun",
        newLoopId: `${root}_r1`,
        rerunCount: 1,
        reason: "alignment_threshold_not_met",
        fatigue: 0,
        forceFinalize: false,
        overriddenBy: null,
      },
      {
        loopId: `${root}_r1`,
        decision: "rerun",
        newLoopId: `${root}_r2`,
        rerunCount: 2,
        reason: "alignment_threshold_not_met",
        fatigue: 0.15,
        forceFinalize: false,
        overriddenBy: null,
      },
      {
        loopId: `${root}_r2`,
        decision: "rerun",
        newLoopId: `${root}_r3`,
        rerunCount: 3,
        reason: "alignment_threshold_not_met",
        fatigue: 0.3,
        forceFinalize: false,
        overriddenBy: null,
      },
      // Past the limit of 3 only because of the override, and the decision says so.
      {
        loopId: `${root}_r3`,
        decision: "rerun",
        newLoopId: `${root}_r4`,
        rerunCount: 4,
        reason: "alignment_threshold_not_met",
        fatigue: 0.45,
        forceFinalize: false,
        overriddenBy: "operator",
      },
      // Fatigue 0.6 >= 0.5 and limit both lifted for this loop by the SRE.
      {
        loopId: `${root}_r4`,
        decision: "rerun",
        newLoopId: `${root}_r5`,
        rerunCount: 5,
        reason: "alignment_threshold_not_met",
        fatigue: 0.6,
        forceFinalize: false,
        overriddenBy: "sre",
      },
      // The root's override covers the limit, not fatigue: fatigue stops the chain.
      {
        loopId: `${root}_r5`,
        decision: "finalize",
        newLoopId: null,
        rerunCount: 5,
        reason: "reflection_fatigue",
        fatigue: 0.75,
        forceFinalize: true,
        overriddenBy: null,
      },
    ]);
    expect(decisions[3]?.reasonDetail).toContain("rerun limit 3 overridden by operator");
    expect(decisions[4]?.reasonDetail).toContain("fatigue 0.6 >= 0.5 overridden by sre");
    expect(decisions[5]?.reasonDetail).toBe(
      "fatigue 0.75 >= 0.5; reruns stopped improving alignment or drift",
    );
  });

  it("decides one family in order when its events arrive at once on one partition", async () => {
    const producer = h.kafka.producer();
    await producer.connect();
    const families = [`burst-a-${h.id}`, `burst-b-${h.id}`].map((root) =>
      Array.from({ length: 4 }, (_, i) =>
        completion(
          tenantId,
          i === 0 ? root : `${root}_r${String(i)}`,
          i === 0 ? undefined : i === 1 ? root : `${root}_r${String(i - 1)}`,
          { alignment: 0.6, drift: 0.4 },
        ),
      ),
    );
    // Interleaved a0, b0, a1, b1, … on partition 0: the app runs up to 16 events of a partition at once.
    const interleaved = [0, 1, 2, 3].flatMap((i) => families.map((f) => f[i])).filter((e) => e !== undefined);
    await producer.send({
      topic: h.config.topics.taskCompleted,
      messages: await Promise.all(
        interleaved.map(async (event) => ({
          key: event.loopId,
          partition: 0,
          value: await h.codec.encode(h.config.topics.taskCompleted, "task-completed.v1", event),
        })),
      ),
    });
    await producer.disconnect();

    for (const family of families) {
      const decisions: LoopDecision[] = [];
      for (const event of family) decisions.push(await decisionFor(h, event.eventId));
      // Each decision saw its parent's trace: counts strictly increase and fatigue accumulates.
      expect(decisions.map((d) => [d.decision, d.rerunCount, d.fatigue])).toEqual([
        ["rerun", 1, 0],
        ["rerun", 2, 0.15],
        ["rerun", 3, 0.3],
        ["finalize", 3, 0.45],
      ]);
      expect(decisions[3]?.reason).toBe("max_reruns_reached");
      const decidedAt = decisions.map((d) => Date.parse(d.decidedAt));
      expect([...decidedAt].sort((a, b) => a - b)).toEqual(decidedAt);
    }
  });
});

describe("bias echo when two families raise the same tag at once (Postgres loop state)", () => {
  it("refuses a commit decided from a stale bias count, and the fresh decision halts", async () => {
    const h = harnesses[0];
    if (!h) throw new Error("no harness");
    const { tenantId } = newTenant();
    const store = createPgReflectionStore(h.pool);
    const tagged = (loopId: string) =>
      completion(tenantId, loopId, undefined, { alignment: 0.5, drift: 0.5, biasTags: ["groupthink"] });
    const decide = async (event: TaskCompleted) =>
      decideLoop(
        { event, ...(await store.loopContext(event)), answerNeedsRetry: false },
        defaultGuardrailConfig,
      );
    const commit = (event: TaskCompleted, loop: Awaited<ReturnType<typeof decide>>) =>
      store.commit(
        {
          event,
          signature: null,
          store: null,
          loop,
          answerEvaluation: null,
          episode: event.task.description,
          judgement: null,
          decidedAt: new Date(),
          sourceRecord: null,
        },
        [],
      );

    const first = tagged(`echo-a-${h.id}`);
    expect((await commit(first, await decide(first))).committed).toBe(true); // groupthink: 1
    // Two families read the history (1) at the same moment: each would count 2, no echo.
    const [b, c] = [tagged(`echo-b-${h.id}`), tagged(`echo-c-${h.id}`)];
    const [decidedB, decidedC] = [await decide(b), await decide(c)];
    expect([decidedB.biasEcho, decidedC.biasEcho]).toEqual([false, false]);
    expect((await commit(b, decidedB)).committed).toBe(true); // groupthink: 2
    // C's decision rests on a count that is no longer true: nothing is written.
    const stale = await commit(c, decidedC);
    expect(stale).toMatchObject({ committed: false, staleLoopState: true });
    const written = await h.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM loop_traces WHERE tenant_id = $1 AND loop_id = $2",
      [tenantId, c.loopId],
    );
    expect(written.rows[0]?.n).toBe(0);
    // Decided again from fresh state, C is the third occurrence: bias echo.
    const fresh = await decide(c);
    expect(fresh).toMatchObject({ decision: "halt", biasEcho: true, repeatedTags: ["groupthink"] });
    expect((await commit(c, fresh)).committed).toBe(true);
    const history = await h.pool.query<{ occurrences: number }>(
      "SELECT occurrences FROM bias_tag_history WHERE tenant_id = $1 AND tag = 'groupthink'",
      [tenantId],
    );
    expect(history.rows[0]?.occurrences).toBe(3);
  });
});

describe("rerun chains through Kafka with the limit raised (GUARDRAIL_MAX_RERUNS=6)", () => {
  // With the default numbers fatigue reaches 0.5 only at the 4th stale rerun (0.15, 0.30, 0.45,
  // 0.60), after the default limit of 3 has already stopped the chain. Raising the limit is how
  // an operator makes fatigue the guardrail that binds.
  let h: Harness;
  const { tenantId } = newTenant();

  beforeAll(async () => {
    h = await startHarness({ env: { GUARDRAIL_MAX_RERUNS: "6" } });
    harnesses.push(h);
  });

  it("stops a chain whose reruns stop improving, by reflection fatigue", async () => {
    const root = `fatigue-${h.id}`;
    const steps: Step[] = [
      { alignment: 0.6, drift: 0.4 },
      { alignment: 0.6, drift: 0.4 }, // no gain: +0.15
      { alignment: 0.65, drift: 0.4 }, // alignment +0.05 (exactly the threshold): −0.05
      { alignment: 0.66, drift: 0.39 }, // +0.01 / +0.01: +0.15
      { alignment: 0.66, drift: 0.39 }, // +0.15
      { alignment: 0.66, drift: 0.39 }, // +0.15 → 0.55 ≥ 0.5
      { alignment: 0.66, drift: 0.39 },
    ];
    const decisions = await walk(h, tenantId, root, steps);
    expect(decisions.map((d) => [d.loopId, d.decision, d.rerunCount, d.fatigue, d.fatigueIncreased])).toEqual(
      [
        [root, "rerun", 1, 0, false],
        [`${root}_r1`, "rerun", 2, 0.15, true],
        [`${root}_r2`, "rerun", 3, 0.1, false],
        [`${root}_r3`, "rerun", 4, 0.25, true],
        [`${root}_r4`, "rerun", 5, 0.4, true],
        [`${root}_r5`, "finalize", 5, 0.55, true],
      ],
    );
    expect(decisions[5]).toMatchObject({
      reason: "reflection_fatigue",
      forceFinalize: true,
      maxReruns: 6,
      newLoopId: null,
      reasonDetail: "fatigue 0.55 >= 0.5; reruns stopped improving alignment or drift",
    });
    const trace = await h.pool.query<{
      reflection_fatigue: number;
      force_finalize: boolean;
      rerun_reason: string;
    }>(
      "SELECT reflection_fatigue, force_finalize, rerun_reason FROM loop_traces WHERE tenant_id = $1 AND loop_id = $2",
      [tenantId, `${root}_r5`],
    );
    expect(trace.rows[0]).toMatchObject({ force_finalize: true, rerun_reason: "reflection_fatigue" });
    expect(trace.rows[0]?.reflection_fatigue).toBeCloseTo(0.55, 5);
  });
});
