import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { classifyFailure, errorCodes, ReflectorError, type ErrorCode } from "../../../src/domain/errors.js";

describe("error codes", () => {
  it("docs/error-codes.md lists every code with its action and summary, and no other", () => {
    const doc = readFileSync(new URL("../../../docs/error-codes.md", import.meta.url), "utf8");
    const rows = [...doc.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*([a-z-]+)\s*\|\s*(.+?)\s*\|$/gm)].map((m) => ({
      code: m[1],
      action: m[2],
      summary: m[3],
    }));
    const expected = Object.entries(errorCodes).map(([code, { action, summary }]) => ({
      code,
      action,
      summary,
    }));
    expect(rows).toEqual(expected);
  });

  it("classifies every code by its table entry", () => {
    for (const code of Object.keys(errorCodes) as ErrorCode[]) {
      expect(classifyFailure(new ReflectorError(code, "x"))).toBe(errorCodes[code].action);
    }
  });

  it("treats transport failures as retryable and unknown errors as crashes", () => {
    expect(
      classifyFailure(
        Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
      ),
    ).toBe("retry");
    expect(classifyFailure(Object.assign(new Error("terminating connection"), { code: "57P01" }))).toBe(
      "retry",
    );
    expect(classifyFailure(Object.assign(new Error("leader not available"), { retriable: true }))).toBe(
      "retry",
    );
    expect(classifyFailure(new TypeError("cannot read properties of undefined"))).toBe("crash");
    expect(classifyFailure("a string")).toBe("crash");
    expect(new ReflectorError("STORE_UNAVAILABLE", "down").retryable).toBe(true);
    expect(new ReflectorError("SCHEMA_INVALID", "bad").retryable).toBe(false);
  });
});
