import { describe, expect, it } from "vitest";
import { isOutage, ReflectorError } from "../../../src/domain/errors.js";
import { backoffMs, isHeld, nextStep } from "../../../src/pipeline/failure-policy.js";

const config = { maxAttempts: 3, baseMs: 100, maxMs: 1000 };

describe("nextStep", () => {
  it("backs off in process, then hands the event to the retry topic, then dead-letters it", () => {
    const err = new ReflectorError("GENERATOR_FAILED", "boom");
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
    ] as const) {
      expect(nextStep(new ReflectorError(code, "down"), 50, true, config).step).toBe("pause");
    }
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    expect(nextStep(refused, 99, false, config)).toMatchObject({ step: "pause", code: "TRANSPORT" });
  });

  it("holds a tenant over its LLM budget without giving up, spending attempts or calling it an outage", () => {
    const spent = new ReflectorError("LLM_BUDGET_EXHAUSTED", "tenant-a spent 1000 of 1000 tokens");
    for (const attempt of [1, 5, 500]) {
      const step = nextStep(spent, attempt, true, config, () => 1);
      expect(step.step).toBe("hold");
      expect(step).toMatchObject({ code: "LLM_BUDGET_EXHAUSTED" });
      if (step.step === "hold") expect(step.delayMs).toBeLessThanOrEqual(config.maxMs);
    }
    expect(isHeld(spent)).toBe(true);
    expect(isHeld(new ReflectorError("LLM_CIRCUIT_OPEN", "open"))).toBe(false);
    expect(isOutage(spent)).toBe(false);
  });

  it("dead-letters bad events at once and crashes on bugs", () => {
    expect(nextStep(new ReflectorError("SCHEMA_INVALID", "x"), 1, false, config)).toEqual({
      step: "dead-letter",
      code: "SCHEMA_INVALID",
    });
    expect(nextStep(new TypeError("undefined is not a function"), 1, false, config)).toEqual({
      step: "crash",
      code: "INTERNAL",
    });
    expect(nextStep("thrown string", 1, false, config).step).toBe("crash");
  });
});

describe("backoffMs", () => {
  it("grows exponentially up to the cap, with jitter between half the base and the ceiling", () => {
    expect(backoffMs(1, config, () => 0)).toBe(50);
    expect(backoffMs(1, config, () => 1)).toBe(100);
    expect(backoffMs(3, config, () => 1)).toBe(400);
    expect(backoffMs(10, config, () => 1)).toBe(1000);
    const samples = new Set(Array.from({ length: 20 }, (_, i) => backoffMs(4, config, () => i / 20)));
    expect(samples.size).toBeGreaterThan(10);
  });
});
