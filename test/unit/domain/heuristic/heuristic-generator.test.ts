import { describe, expect, it } from "vitest";
import { cosineSimilarity, embedText } from "../../../../src/domain/embedding/hashing-embedding.js";
import { classifyFailure } from "../../../../src/domain/heuristic/classify-failure.js";
import { generateHeuristicReflection } from "../../../../src/domain/heuristic/generate-heuristic-reflection.js";
import { defaultQualityConfig } from "../../../../src/domain/quality/quality-config.js";
import { validateReflection } from "../../../../src/domain/quality/validate-reflection.js";
import { exampleEvent } from "../../../support/examples.js";
import { taskEvent } from "../../../support/task-events.js";

describe("classifyFailure reads the trace", () => {
  it.each([
    ["01", "timeout", "postgres_query"],
    ["02", "rate_limit", "github_search"],
    ["03", "auth", "salesforce_query"],
    ["04", "validation", "calendar_create_event"],
    ["05", "conflicting_claim", undefined],
    ["06", "wrong_choice", undefined],
    ["07", "quality", undefined],
    ["12", "network", "http_fetch"],
  ])("example %s is a %s failure", (prefix, kind, tool) => {
    const analysis = classifyFailure(exampleEvent(prefix));
    expect(analysis.kind).toBe(kind);
    if (tool) {
      expect(analysis.tool).toBe(tool);
      expect(analysis.failingStep?.toolName).toBe(tool);
    }
  });

  it("finds the failing step, the call that led to it, and the numbers", () => {
    const timeout = classifyFailure(taskEvent());
    expect(timeout.failingStep?.eventId).toBe("e2");
    expect(timeout.precedingStep?.eventId).toBe("e1");
    expect(timeout.numbers.timeoutMs).toBe(30000);
    expect(classifyFailure(exampleEvent("02")).numbers.retryAfterS).toBe(20);
  });

  it("says unknown when the trace holds no evidence", () => {
    const bare = taskEvent({ error: undefined, events: [], outcome: "failure" });
    expect(classifyFailure(bare).kind).toBe("unknown");
  });
});

describe("generateHeuristicReflection", () => {
  it("writes executable adjustments with the trace's own numbers", () => {
    const timeout = generateHeuristicReflection(taskEvent());
    expect(timeout.adjustments).toContain(
      "set timeout_ms = 60000 for postgres_query only while paginated batches are in place",
    );
    expect(timeout.reflectionText).toMatch(/failing step was e2/);
    expect(timeout.reflectionText).toMatch(/followed the call e1/);
    const rateLimit = generateHeuristicReflection(exampleEvent("02"));
    expect(rateLimit.adjustments[0]).toBe(
      "set retry_wait_s = 20 for github_search whenever the response carries Retry-After",
    );
    expect(rateLimit.errorCategory).toBe("rate_limit_error");
  });

  it("is deterministic", () => {
    const event = exampleEvent("03");
    expect(generateHeuristicReflection(event)).toEqual(generateHeuristicReflection(structuredClone(event)));
  });

  it("is honest about thin evidence", () => {
    const bare = generateHeuristicReflection(taskEvent({ error: undefined, events: [], outcome: "failure" }));
    expect(bare.confidence).toBeLessThan(0.5);
    expect(bare.reflectionText).toMatch(/trace holds no error event|evidence in the trace is thin/);
  });

  it("widens a pattern that lacked evidence when told so on the next attempt", () => {
    const event = exampleEvent("01");
    const first = generateHeuristicReflection(event);
    expect(first.patterns).toEqual(["timeout on postgres_query"]);
    const second = generateHeuristicReflection(event, {
      attempt: 2,
      violations: ["Invalid pattern 'timeout on postgres_query': confidence=0.00 < 0.75"],
      missingFields: [],
    });
    expect(second.patterns).toEqual(["timeout_error"]);
  });

  it.each(["01", "02", "03", "04", "05", "06", "12"])(
    "example %s passes the quality rules on its own merits once its pattern has history",
    (prefix) => {
      const event = exampleEvent(prefix);
      const reflection = generateHeuristicReflection(event);
      const task = [event.task.description, event.task.goal, event.task.query, event.error?.message]
        .concat(
          event.events
            .filter((e) => e.type === "error_event" || e.error)
            .map((e) => `${e.toolName ?? ""} ${e.content}`),
        )
        .filter(Boolean)
        .join("\n");
      const relevance = cosineSimilarity(embedText(reflection.reflectionText), embedText(task));
      const patternEvidence = new Map(reflection.patterns.map((p) => [p, { occurrences: 4, total: 5 }]));
      const result = validateReflection(
        reflection,
        { patternEvidence, relevance, novelty: 1 },
        defaultQualityConfig,
      );
      expect(result.violations).toEqual([]);
      expect(result.qualityScore).toBeGreaterThanOrEqual(0.9);
    },
  );
});
