import { describe, expect, it } from "vitest";
import { registryUnavailable } from "../../../src/adapters/schema-registry/value-codec.js";

const responseError = (status: number, body: string) =>
  Object.assign(new Error(`Error, status ${String(status)}: ${body}`), { status });

describe("schema registry failures", () => {
  it("a 404 is the value's problem even when its text holds a number like 555", () => {
    expect(
      registryUnavailable(responseError(404, '{"error_code":40403,"message":"Schema 555 not found"}')),
    ).toBe(false);
  });

  it("5xx, 429, 408 and refused credentials (401, 403) are outages", () => {
    for (const status of [500, 503, 429, 408, 401, 403])
      expect(registryUnavailable(responseError(status, "busy"))).toBe(true);
  });

  it("a transport error without a status is an outage", () => {
    expect(
      registryUnavailable(
        Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8081"), { code: "ECONNREFUSED" }),
      ),
    ).toBe(true);
    expect(registryUnavailable(new Error("socket hang up"))).toBe(true);
    expect(registryUnavailable(new Error("magic byte 5 unknown"))).toBe(false);
  });
});
