import { describe, expect, it } from "vitest";
import { storeError } from "../../../src/adapters/postgres/store-errors.js";
import { classifyFailure, ReflectorError } from "../../../src/domain/errors.js";

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("Postgres failures, as the consumer acts on them", () => {
  it.each([
    ["22P05", "unsupported Unicode escape sequence"],
    ["22021", "invalid byte sequence for encoding UTF8: 0x00"],
    ["22003", "value out of range for type integer"],
    ["23514", "new row violates check constraint"],
    ["54000", "index row size 3160 exceeds btree version 4 maximum 2704"],
    ["54000", "string is too long for tsvector (1125000 bytes, max 1048575 bytes)"],
  ])("%s (%s) dead-letters the event with Postgres's reason", (code, message) => {
    const mapped = storeError(pgError(code, message));
    expect(mapped).toBeInstanceOf(ReflectorError);
    expect((mapped as ReflectorError).code).toBe("DATA_REJECTED");
    expect((mapped as Error).message).toContain(message);
    expect(classifyFailure(mapped)).toBe("dead-letter");
  });

  it("an outage pauses and retries", () => {
    const mapped = storeError(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
    expect((mapped as ReflectorError).code).toBe("STORE_UNAVAILABLE");
    expect(classifyFailure(mapped)).toBe("retry");
  });

  it.each(["57P01", "57P03", "53300", "40001", "40P01", "08006"])(
    "%s (the server going away, a deadlock, a serialization failure) is an outage",
    (code) => {
      const mapped = storeError(pgError(code, "transient"));
      expect((mapped as ReflectorError).code).toBe("STORE_UNAVAILABLE");
      expect(classifyFailure(mapped)).toBe("retry");
    },
  );

  it("a failure the adapter already named is kept as it is", () => {
    const named = new ReflectorError("INTERNAL", "reflector_commit returned no row");
    expect(storeError(named)).toBe(named);
  });

  it("a bug (undefined column) surfaces as it is and crashes", () => {
    const err = pgError("42703", 'column "nope" does not exist');
    expect(storeError(err)).toBe(err);
    expect(classifyFailure(err)).toBe("crash");
  });
});
