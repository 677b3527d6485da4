import { APIError } from "openai";
import { describe, expect, it } from "vitest";
import { createCircuitBreaker, type CircuitState } from "../../../src/adapters/llm/circuit-breaker.js";
import { callLlm } from "../../../src/adapters/llm/llm-call.js";
import { classifyLlmError, CircuitOpenError, LlmOutputError } from "../../../src/adapters/llm/llm-errors.js";
import { failureOf, ReflectorError } from "../../../src/domain/errors.js";
import { nextStep } from "../../../src/adapters/kafka/failure-policy.js";

function breakerAt(start = 0) {
  const clock = { t: start };
  const changes: { state: CircuitState; openForMs: number | null }[] = [];
  const breaker = createCircuitBreaker({
    failureThreshold: 3,
    openMs: 1000,
    now: () => clock.t,
    onChange: (change) => changes.push(change),
  });
  return { breaker, clock, changes };
}

describe("createCircuitBreaker", () => {
  it("opens after the threshold of consecutive retryable failures and refuses requests", () => {
    const { breaker, changes } = breakerAt();
    for (let i = 0; i < 2; i += 1) {
      expect(breaker.tryAcquire()).toBe(true);
      breaker.record("retryableFailure");
    }
    expect(breaker.state()).toBe("closed");
    breaker.record("retryableFailure");
    expect(breaker.state()).toBe("open");
    expect(breaker.tryAcquire()).toBe(false);
    expect(changes).toEqual([{ state: "open", openForMs: null }]);
  });

  it("does not count bad requests, and a success resets the count", () => {
    const { breaker } = breakerAt();
    breaker.record("retryableFailure");
    breaker.record("invalidOutput");
    breaker.record("ok");
    breaker.record("retryableFailure");
    breaker.record("failure");
    breaker.record("invalidOutput");
    expect(breaker.state()).toBe("closed");
    breaker.record("invalidOutput");
    expect(breaker.state()).toBe("open");
  });

  it("lets one probe through after openMs; the probe's success closes it", () => {
    const { breaker, clock, changes } = breakerAt();
    for (let i = 0; i < 3; i += 1) breaker.record("retryableFailure");
    clock.t = 999;
    expect(breaker.tryAcquire()).toBe(false);
    clock.t = 1000;
    expect(breaker.state()).toBe("half-open");
    expect(breaker.tryAcquire()).toBe(true);
    expect(breaker.tryAcquire()).toBe(false); // only one probe at a time
    clock.t = 1200;
    breaker.record("ok");
    expect(breaker.state()).toBe("closed");
    expect(breaker.tryAcquire()).toBe(true);
    expect(changes.map((c) => c.state)).toEqual(["open", "half-open", "closed"]);
    expect(changes.at(-1)?.openForMs).toBe(1200);
  });

  it("re-opens when the probe fails, and reports the whole open time when it finally closes", () => {
    const { breaker, clock, changes } = breakerAt();
    for (let i = 0; i < 3; i += 1) breaker.record("retryableFailure");
    clock.t = 1000;
    expect(breaker.tryAcquire()).toBe(true);
    breaker.record("retryableFailure");
    expect(breaker.state()).toBe("open");
    clock.t = 1500;
    expect(breaker.tryAcquire()).toBe(false);
    clock.t = 2000;
    expect(breaker.tryAcquire()).toBe(true);
    clock.t = 2100;
    breaker.record("ok");
    expect(changes.map((c) => c.state)).toEqual(["open", "half-open", "open", "half-open", "closed"]);
    expect(changes.at(-1)?.openForMs).toBe(2100);
  });
});

describe("callLlm with a circuit breaker", () => {
  const serverError = () => APIError.generate(503, { error: { message: "down" } }, undefined, new Headers());

  it("stops sending requests once open and fails fast as an outage the consumer pauses on", async () => {
    const breaker = createCircuitBreaker({ failureThreshold: 3, openMs: 60_000 });
    let requests = 0;
    const policy = { timeoutMs: 1000, maxRetries: 5, retryBaseMs: 1, retryMaxDelayMs: 2, breaker };
    const failing = () => {
      requests += 1;
      return Promise.reject(serverError());
    };
    const first = await callLlm(policy, "m", "test", failing).catch((err: unknown) => err);
    // 3 real requests open the circuit; the 4th attempt is refused without a request.
    expect(requests).toBe(3);
    expect(first).toBeInstanceOf(ReflectorError);
    expect((first as ReflectorError).code).toBe("LLM_CIRCUIT_OPEN");

    const second = await callLlm(policy, "m", "test", failing).catch((err: unknown) => err);
    expect(requests).toBe(3);
    expect((second as ReflectorError).code).toBe("LLM_CIRCUIT_OPEN");
    expect(failureOf(second).kind).toBe("outage");
    // The event is held (pause), never spent: not even after many outage retries.
    const step = nextStep(failureOf(second), 50, true, { maxAttempts: 1, baseMs: 10, maxMs: 100 });
    expect(step.step).toBe("pause");
  });

  it("classifies a refused request as final for the request's own retry loop", () => {
    expect(classifyLlmError(new CircuitOpenError("open"))).toEqual({
      code: "circuit_open",
      retryable: false,
    });
  });
});

describe("a run of unusable answers", () => {
  it("opens the circuit, so the events are held instead of spending their attempts", async () => {
    const breaker = createCircuitBreaker({ failureThreshold: 3, openMs: 60_000 });
    const policy = { timeoutMs: 1000, maxRetries: 0, breaker };
    const garbage = () =>
      Promise.resolve({ value: "not json", promptTokens: 1, completionTokens: 1, invalidOutput: true });
    for (let i = 0; i < 3; i += 1) expect(await callLlm(policy, "m", "test", garbage)).toBe("not json");
    const held = await callLlm(policy, "m", "test", garbage).catch((err: unknown) => err);
    expect((held as ReflectorError).code).toBe("LLM_CIRCUIT_OPEN");
    expect(nextStep(failureOf(held), 1, true, { maxAttempts: 1, baseMs: 10, maxMs: 100 }).step).toBe("pause");
  });

  it("counts thrown invalid output (the embedder's) too, and a good answer resets the count", async () => {
    const breaker = createCircuitBreaker({ failureThreshold: 2, openMs: 60_000 });
    const policy = { timeoutMs: 1000, maxRetries: 0, breaker };
    const bad = () => Promise.reject(new LlmOutputError("no vectors", []));
    const good = () => Promise.resolve({ value: 1, promptTokens: 1, completionTokens: 0 });
    await callLlm(policy, "m", "test", bad).catch(() => undefined);
    await callLlm(policy, "m", "test", good);
    await callLlm(policy, "m", "test", bad).catch(() => undefined);
    expect(breaker.state()).toBe("closed");
    await callLlm(policy, "m", "test", bad).catch(() => undefined);
    expect(breaker.state()).toBe("open");
  });
});
