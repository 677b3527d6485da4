import { describe, expect, it } from "vitest";
import type { Reflection } from "../../../../src/domain/contracts/index.js";
import type { ReflectionGenerator } from "../../../../src/pipeline/ports.js";
import { match } from "../../../../src/pipeline/stages/match.js";
import { rejudge } from "../../../../src/pipeline/stages/rejudge.js";
import { createOfflineProcessor } from "../../../support/fakes.js";
import { taskEvent } from "../../../support/task-events.js";
import { eventState, stageDeps } from "./stage-fixtures.js";

/** A lesson whose pattern only recurrences of the failure can prove. */
const timeoutLesson: Reflection = {
  reflectionText:
    "Fetching the customer order history timed out: postgres_query exceeded the 30s limit because the agent " +
    "assumed one query over all orders for customer analysis would finish. Canceling statement due to " +
    "statement timeout shows the strategy fetched every order at once, a fundamental flaw for large tables.",
  strategyText: "Page through orders by customer key with LIMIT 1000.",
  importance: 0.8,
  confidence: 0.85,
  tags: ["timeout", "postgres_query"],
  errorCategory: "timeout_error",
  patterns: ["timeout on postgres_query"],
  adjustments: [
    "add constraint: postgres_query must filter orders on an indexed customer key",
    "set page_size = 1000 for postgres_query",
  ],
  learning:
    "Large reads of customer orders through postgres_query must be paginated; a raised timeout only moves the failure.",
};

const model: ReflectionGenerator = { name: "openai", generate: () => Promise.resolve(timeoutLesson) };

/** The stages' deps over a store where the lesson above was stored by `seeded` earlier events. */
async function withLesson(seeded: number) {
  const fixture = stageDeps(model);
  const { store, index } = fixture.deps;
  const processor = createOfflineProcessor({ store, index }, { generator: model });
  for (let i = 0; i < seeded; i += 1) await processor.process(taskEvent());
  const matched = await match(fixture.deps, eventState(fixture.deps, taskEvent()));
  if (!matched) throw new Error("a failure is always filed under a signature");
  return { ...fixture, matched };
}

describe("stage rejudge", () => {
  it("judges nothing again for a new lesson", async () => {
    const { deps, stages } = stageDeps(model);
    const matched = await match(deps, eventState(deps, taskEvent()));
    if (!matched) throw new Error("a failure is always filed under a signature");
    stages.length = 0;
    expect((await rejudge(deps, matched)).rejudged).toBeNull();
    expect(stages).toEqual([]);
  });

  it("keeps the warning while the pattern still lacks evidence (seen twice)", async () => {
    const { deps, matched } = await withLesson(1);
    expect(matched.matched.known?.verdict).toBe("accepted_with_warnings");
    expect(matched.matched.known?.violations.join()).toMatch(/Unproven pattern/);
    const { rejudged } = await rejudge(deps, matched);
    expect(rejudged?.verdict ?? matched.matched.known?.verdict).toBe("accepted_with_warnings");
    expect((rejudged ?? matched.matched.known)?.violations.join()).toMatch(/Unproven pattern/);
  });

  it("accepts the recalled lesson once its recurrences prove the pattern", async () => {
    const { deps, matched, stages } = await withLesson(2);
    stages.length = 0;
    const { rejudged } = await rejudge(deps, matched);
    expect(rejudged?.verdict).toBe("accepted");
    expect(rejudged?.violations.join()).not.toMatch(/Unproven pattern/);
    expect(stages).toEqual(["store-read"]);
  });

  it("does not read evidence for an accepted lesson", async () => {
    const { deps, matched, stages } = await withLesson(2);
    const known = matched.matched.known;
    if (!known) throw new Error("the lesson is stored");
    stages.length = 0;
    const accepted = {
      ...matched,
      matched: { ...matched.matched, known: { ...known, verdict: "accepted" as const } },
    };
    expect((await rejudge(deps, accepted)).rejudged).toBeNull();
    expect(stages).toEqual([]);
  });
});
