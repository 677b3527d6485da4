import { describe, expect, it } from "vitest";
import { parseReflectionFeedback, parseTaskCompleted } from "../../../src/domain/contracts/index.js";
import { ReflectorError } from "../../../src/domain/errors.js";
import { taskEvent } from "../../support/task-events.js";

const valid = {
  schemaVersion: 1,
  feedbackId: "fb-1",
  tenantId: "tenant-a",
  reflectionId: "6f1c1d9e-2b7a-4c55-9d0e-7f6b7a1e2c3d",
  rating: "down",
  occurredAt: "2026-11-20T10:00:00.000Z",
};

function codeOf(raw: unknown, parse: (raw: unknown) => unknown = parseReflectionFeedback): string {
  try {
    parse(raw);
    return "ok";
  } catch (err) {
    return err instanceof ReflectorError ? `${err.code}: ${err.message}` : String(err);
  }
}

describe("reflection-feedback.v1 on the wire", () => {
  it("accepts the contract with optional comment and user", () => {
    expect(parseReflectionFeedback({ ...valid, comment: "wrong fix", userId: "u-1" })).toMatchObject({
      rating: "down",
      comment: "wrong fix",
      userId: "u-1",
    });
  });

  it("names every bad field in one SCHEMA_INVALID reason", () => {
    expect(codeOf({ ...valid, rating: "meh", reflectionId: "nope" })).toMatch(
      /^SCHEMA_INVALID: reflectionId: .*; rating: /,
    );
    expect(codeOf({ ...valid, extra: 1 })).toMatch(/^SCHEMA_INVALID: .*extra/);
    expect(codeOf({ ...valid, occurredAt: "yesterday" })).toMatch(/^SCHEMA_INVALID: occurredAt/);
  });

  it("refuses other schema versions with their own code", () => {
    expect(codeOf({ ...valid, schemaVersion: 2 })).toBe(
      "UNSUPPORTED_SCHEMA_VERSION: schemaVersion 2 is not supported (this build reads 1)",
    );
  });
});

describe("task-completed.v1 on the wire", () => {
  it("reads a valid event as the contract's output", () => {
    const event = taskEvent();
    expect(parseTaskCompleted(JSON.parse(JSON.stringify(event)))).toMatchObject({ eventId: event.eventId });
  });

  it("refuses a bad field and another schema version with the same codes as feedback", () => {
    expect(codeOf({ ...taskEvent(), outcome: "maybe" }, parseTaskCompleted)).toMatch(
      /^SCHEMA_INVALID: outcome: /,
    );
    expect(codeOf({ ...taskEvent(), schemaVersion: 3 }, parseTaskCompleted)).toBe(
      "UNSUPPORTED_SCHEMA_VERSION: schemaVersion 3 is not supported (this build reads 1)",
    );
  });

  it("names the root when the value is not an object", () => {
    expect(codeOf("a string", parseTaskCompleted)).toMatch(/^SCHEMA_INVALID: \(root\): /);
  });
});
