import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoopDecisionV1, ReflectionOutcomeV1, type TaskCompleted } from "../../src/domain/contracts/index.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

/**
 * The `lite` and `full` modes through Kafka: `lite` reflects on failures only, `full` also on
 * successes worth a lesson. Every event gets its loop decision in both modes; what differs is whether a
 * reflection outcome is published (and a generator call made) for a success.
 */

function success(tenantId: string, tier: "container-full" | "inline", description: string): TaskCompleted {
  const { error: _error, ...rest } = taskEvent({ tenantId });
  return {
    ...rest,
    outcome: "success",
    task: { description, goal: "Answer with the customer's order totals", tier },
    events: [
      {
        eventId: "e1",
        type: "tool_call",
        timestamp: "2026-11-20T10:00:00.000Z",
        toolName: "postgres_query",
        content: "SELECT sum(total) FROM orders WHERE customer_id = 4411 LIMIT 1000",
      },
    ],
  };
}

interface Run {
  h: Harness;
  tenantId: string;
  calls: () => number;
}

async function startMode(mode: "lite" | "full"): Promise<Run> {
  const { createHeuristicGenerator } = await import("../../src/adapters/llm/heuristic-generator.js");
  const inner = createHeuristicGenerator();
  let calls = 0;
  const h = await startHarness({
    env: { REFLECTOR_MODE: mode },
    overrides: {
      generator: {
        name: inner.name,
        generate: (request) => {
          calls += 1;
          return inner.generate(request);
        },
      },
    },
  });
  return { h, tenantId: `modes-${mode}-${randomUUID().slice(0, 8)}`, calls: () => calls };
}

/** Publishes the event and returns its decision, plus the outcome when one is published. */
async function outputsOf(run: Run, event: TaskCompleted) {
  const { h } = run;
  await run.h.publish(event);
  const decision = await waitFor(
    () => h.on(h.config.topics.loopDecision, (c) => c.value?.sourceEventId === event.eventId)[0],
    { timeoutMs: 60_000, what: `decision for ${event.eventId}` },
  );
  // Outputs of one event are produced in one transaction: once the decision is visible, an
  // outcome (published before it) would be too, give or take the viewer's fetch.
  const outcomes = () =>
    h
      .on(h.config.topics.reflectionAccepted, (c) => c.value?.sourceEventId === event.eventId)
      .concat(h.on(h.config.topics.reflectionRejected, (c) => c.value?.sourceEventId === event.eventId));
  const processed = await h.pool.query<{ outputs: { role: string }[] }>(
    "SELECT outputs FROM processed_events WHERE tenant_id = $1 AND event_id = $2",
    [event.tenantId, event.eventId],
  );
  const roles = (processed.rows[0]?.outputs ?? []).map((o) => o.role);
  const expectOutcome = roles.some((r) => r.startsWith("reflection"));
  const outcome = expectOutcome
    ? await waitFor(() => outcomes()[0], { timeoutMs: 30_000, what: `outcome for ${event.eventId}` })
    : undefined;
  return {
    decision: LoopDecisionV1.parse(decision.value),
    outcome: outcome ? ReflectionOutcomeV1.parse(outcome.value) : undefined,
    roles,
  };
}

const runs: Run[] = [];
afterAll(async () => {
  for (const run of runs) await run.h.close();
});

describe("REFLECTOR_MODE through Kafka", () => {
  let lite: Run;
  let full: Run;
  beforeAll(async () => {
    lite = await startMode("lite");
    full = await startMode("full");
    runs.push(lite, full);
  });

  it("lite reflects on a failure but finalizes a success without a reflection or a generator call", async () => {
    const failure = await outputsOf(lite, taskEvent({ tenantId: lite.tenantId }));
    expect(failure.roles).toEqual(["reflectionAccepted", "loopDecision"]);
    expect(failure.outcome).toMatchObject({ generator: "heuristic", stored: true });
    const callsAfterFailure = lite.calls();
    expect(callsAfterFailure).toBeGreaterThanOrEqual(1);

    const important = await outputsOf(
      lite,
      success(lite.tenantId, "container-full", "Summarise order totals for a key account"),
    );
    expect(important.roles).toEqual(["loopDecision"]);
    expect(important.outcome).toBeUndefined();
    expect(important.decision).toMatchObject({ decision: "finalize", reason: "thresholds_met" });
    expect(lite.calls()).toBe(callsAfterFailure);
  });

  it("full also reflects on a success worth a lesson, and still skips a routine one", async () => {
    const failure = await outputsOf(full, taskEvent({ tenantId: full.tenantId }));
    expect(failure.roles).toEqual(["reflectionAccepted", "loopDecision"]);
    const before = full.calls();

    const important = await outputsOf(
      full,
      success(full.tenantId, "container-full", "Summarise order totals for a key account"),
    );
    expect(important.roles[important.roles.length - 1]).toBe("loopDecision");
    expect(important.roles).toHaveLength(2);
    expect(important.outcome?.generator).toBe("heuristic");
    expect(important.decision).toMatchObject({ decision: "finalize" });
    expect(full.calls()).toBeGreaterThan(before);

    const afterImportant = full.calls();
    const routine = await outputsOf(full, success(full.tenantId, "inline", "Look up one order total"));
    expect(routine.roles).toEqual(["loopDecision"]);
    expect(full.calls()).toBe(afterImportant);
  });
});
