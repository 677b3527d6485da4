import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { describe, expect, it } from "vitest";
import {
  classifyLlmError,
  isLlmUnavailable,
  LlmOutputError,
  reflectorCodeFor,
  retryAfterMs,
  toReflectorError,
} from "../../../src/adapters/llm/llm-errors.js";
import { classifyFailure, errorCodes } from "../../../src/domain/errors.js";

function httpError(status: number, headers: Record<string, string> = {}): APIError {
  return APIError.generate(
    status,
    { error: { message: `status ${String(status)}` } },
    undefined,
    new Headers(headers),
  );
}

describe("classifyLlmError", () => {
  it.each([
    [new APIConnectionError({ message: "ECONNREFUSED" }), "connection", true],
    [new APIConnectionTimeoutError(), "timeout", true],
    [httpError(408), "timeout", true],
    [httpError(409), "conflict", true],
    [httpError(429), "rate_limited", true],
    [httpError(500), "server_error", true],
    [httpError(502), "server_error", true],
    [httpError(503), "server_error", true],
    [httpError(400), "bad_request", false],
    [httpError(401), "auth", false],
    [httpError(403), "permission", false],
    [httpError(404), "not_found", false],
    [httpError(422), "unprocessable", false],
    [httpError(418), "unknown", false],
    [new LlmOutputError("not JSON", ["not JSON"]), "invalid_output", false],
    [new APIUserAbortError(), "aborted", false],
    [new TypeError("x is undefined"), "unknown", false],
    ["a string", "unknown", false],
  ])("%s → %s (retryable %s)", (err, code, retryable) => {
    expect(classifyLlmError(err)).toEqual({ code, retryable });
  });

  it("keeps the classification through the wrapping ReflectorError", () => {
    const wrapped = toReflectorError(httpError(429), "openai generator");
    expect(classifyLlmError(wrapped)).toEqual({ code: "rate_limited", retryable: true });
    expect(wrapped.message).toMatch(/^openai generator \(rate_limited\): /);
    expect(toReflectorError(wrapped, "again")).toBe(wrapped);
  });
});

describe("the Reflector code of a final LLM failure", () => {
  it("makes outages and misconfiguration retryable for the consumer, never dead-letters them directly", () => {
    expect(toReflectorError(new APIConnectionTimeoutError(), "g").code).toBe("LLM_UNAVAILABLE");
    expect(toReflectorError(httpError(503), "g").code).toBe("LLM_UNAVAILABLE");
    expect(toReflectorError(httpError(401), "g").code).toBe("LLM_MISCONFIGURED");
    expect(toReflectorError(httpError(404), "g").code).toBe("LLM_MISCONFIGURED");
    expect(toReflectorError(httpError(400), "g").code).toBe("GENERATOR_FAILED");
    expect(toReflectorError(httpError(422), "g").code).toBe("GENERATOR_FAILED");
    expect(toReflectorError(new LlmOutputError("bad", []), "g").code).toBe("LLM_OUTPUT_INVALID");
    for (const err of [httpError(429), httpError(401), httpError(400), new LlmOutputError("bad", [])]) {
      const wrapped = toReflectorError(err, "g");
      expect(errorCodes[wrapped.code].action).toBe("retry");
      expect(classifyFailure(wrapped)).toBe("retry");
    }
    expect(reflectorCodeFor({ code: "aborted", retryable: false })).toBe("LLM_UNAVAILABLE");
  });

  it("tells a circuit breaker when the endpoint itself is unusable", () => {
    expect(isLlmUnavailable(httpError(429))).toBe(true);
    expect(isLlmUnavailable(new APIConnectionError({ message: "down" }))).toBe(true);
    expect(isLlmUnavailable(toReflectorError(httpError(500), "g"))).toBe(true);
    expect(isLlmUnavailable(toReflectorError(httpError(401), "g"))).toBe(true);
    expect(isLlmUnavailable(httpError(400))).toBe(false);
    expect(isLlmUnavailable(toReflectorError(new LlmOutputError("bad", []), "g"))).toBe(false);
    expect(isLlmUnavailable(new Error("bug"))).toBe(false);
  });
});

describe("retryAfterMs", () => {
  const now = new Date("2026-11-20T10:00:00.000Z");
  it("reads retry-after-ms, seconds and HTTP dates, bounded by the cap", () => {
    expect(retryAfterMs(httpError(429, { "retry-after-ms": "250" }), 30_000, now)).toBe(250);
    expect(retryAfterMs(httpError(429, { "retry-after": "2" }), 30_000, now)).toBe(2_000);
    expect(retryAfterMs(httpError(429, { "retry-after": "3600" }), 30_000, now)).toBe(30_000);
    expect(
      retryAfterMs(httpError(503, { "retry-after": "Fri, 20 Nov 2026 10:00:05 GMT" }), 30_000, now),
    ).toBe(5_000);
  });

  it("is null when absent, unreadable or in the past", () => {
    expect(retryAfterMs(httpError(429), 30_000, now)).toBeNull();
    expect(retryAfterMs(httpError(429, { "retry-after": "soon" }), 30_000, now)).toBeNull();
    expect(
      retryAfterMs(httpError(429, { "retry-after": "Fri, 20 Nov 2026 09:00:00 GMT" }), 30_000, now),
    ).toBeNull();
    expect(retryAfterMs(new APIConnectionTimeoutError(), 30_000, now)).toBeNull();
  });
});
