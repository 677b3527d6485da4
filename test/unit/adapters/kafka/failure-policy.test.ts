import { describe, expect, it } from "vitest";
import { failureOf, ReflectorError, type ErrorCode } from "../../../../src/domain/errors.js";
import { backoffMs, nextStep } from "../../../../src/adapters/kafka/failure-policy.js";

const config = { maxAttempts: 3, baseMs: 100, maxMs: 1000 };
const failure = (code: ErrorCode) => failureOf(new ReflectorError(code, "x"));

describe("nextStep", () => {
  it("backs off in process, then hands the event to the retry topic, then dead-letters it", () => {
    const err = failure("GENERATOR_FAILED");
    expect(nextStep(err, 1, false, config, () => 0.5).step).toBe("backoff");
    expect(nextStep(err, 2, false, config, () => 0.5).step).toBe("backoff");
    expect(nextStep(err, 3, false, config)).toEqual({ step: "retry-topic", code: "GENERATOR_FAILED" });
    expect(nextStep(err, 3, true, config)).toEqual({ step: "dead-letter", code: "RETRIES_EXHAUSTED" });
  });

  it("pauses on outages without ever giving up on the event", () => {
    for (const code of [
      "STORE_UNAVAILABLE",
      "INDEX_UNAVAILABLE",
      "LLM_UNAVAILABLE",
      "LLM_CIRCUIT_OPEN",
      "TRANSPORT",
    ] as const) {
      expect(nextStep(failure(code), 50, true, config)).toMatchObject({ step: "pause", code });
    }
  });

  it("holds a tenant over its LLM budget without giving up, spending attempts or calling it an outage", () => {
    const spent = failureOf(new ReflectorError("LLM_BUDGET_EXHAUSTED", "tenant-a spent 1000 of 1000 tokens"));
    expect(spent.kind).toBe("hold");
    for (const attempt of [1, 5, 500]) {
      const step = nextStep(spent, attempt, true, config, () => 1);
      expect(step.step).toBe("hold");
      expect(step).toMatchObject({ code: "LLM_BUDGET_EXHAUSTED" });
      expect(step.step === "hold" ? step.delayMs : Infinity).toBeLessThanOrEqual(config.maxMs);
    }
    expect(failure("LLM_CIRCUIT_OPEN").kind).toBe("outage");
  });

  it("dead-letters bad events at once and crashes on bugs", () => {
    expect(nextStep(failure("SCHEMA_INVALID"), 1, false, config)).toEqual({
      step: "dead-letter",
      code: "SCHEMA_INVALID",
    });
    expect(nextStep(failureOf(new TypeError("undefined is not a function")), 1, false, config)).toEqual({
      step: "crash",
      code: "INTERNAL",
    });
    expect(nextStep(failureOf("thrown string"), 1, false, config).step).toBe("crash");
  });
});

describe("backoffMs", () => {
  it("grows exponentially up to the cap, with jitter between half the base and the ceiling", () => {
    expect(backoffMs(1, config, () => 0)).toBe(50);
    expect(backoffMs(1, config, () => 1)).toBe(100);
    expect(backoffMs(3, config, () => 1)).toBe(400);
    expect(backoffMs(10, config, () => 1)).toBe(1000);
    expect(backoffMs(10_000, config, () => 1)).toBe(1000);
    const samples = new Set(Array.from({ length: 20 }, (_, i) => backoffMs(4, config, () => i / 20)));
    expect(samples.size).toBeGreaterThan(10);
    for (let i = 0; i < 100; i += 1) {
      const ms = backoffMs(1 + (i % 12), config);
      expect(ms).toBeGreaterThanOrEqual(50);
      expect(ms).toBeLessThanOrEqual(1000);
    }
  });
});
