import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  classifyFailure,
  errorCodes,
  failureOf,
  ReflectorError,
  type ErrorCode,
} from "../../../src/domain/errors.js";

describe("error codes", () => {
  it("docs/error-codes.md lists every code with its action, kind and summary, and no other", () => {
    const doc = readFileSync(new URL("../../../docs/error-codes.md", import.meta.url), "utf8");
    const rows = [
      ...doc.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*([a-z-]+)\s*\|\s*([a-z]+)\s*\|\s*(.+?)\s*\|$/gm),
    ].map((m) => ({ code: m[1], action: m[2], kind: m[3], summary: m[4] }));
    const expected = Object.entries(errorCodes).map(([code, { action, kind, summary }]) => ({
      code,
      action,
      kind,
      summary,
    }));
    expect(rows).toEqual(expected);
  });

  it("classifies every code by its table entry", () => {
    for (const code of Object.keys(errorCodes) as ErrorCode[]) {
      const { action, kind } = errorCodes[code];
      expect(failureOf(new ReflectorError(code, "x"))).toEqual({ action, code, kind });
      expect(classifyFailure(new ReflectorError(code, "x"))).toBe(action);
    }
  });

  it("knows no transport: whatever no adapter named is a bug", () => {
    // Adapters name their failures at their edge (store-errors, the Kafka edge, the LLM classifier).
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    expect(failureOf(refused)).toEqual({ action: "crash", code: "INTERNAL", kind: "fatal" });
    expect(classifyFailure(Object.assign(new Error("leader not available"), { retriable: true }))).toBe(
      "crash",
    );
    expect(classifyFailure(new TypeError("cannot read properties of undefined"))).toBe("crash");
    expect(classifyFailure("a string")).toBe("crash");
    expect(new ReflectorError("STORE_UNAVAILABLE", "down").retryable).toBe(true);
    expect(new ReflectorError("SCHEMA_INVALID", "bad").retryable).toBe(false);
  });
});
