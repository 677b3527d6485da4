import { describe, expect, it } from "vitest";
import { within } from "../../../src/domain/within.js";

describe("within", () => {
  it("gives the work's value when it comes first, and the late value when the deadline does", async () => {
    expect(await within(Promise.resolve("done"), 1_000, "late")).toBe("done");
    const never = new Promise<string>(() => undefined);
    const started = Date.now();
    expect(await within(never, 50, null)).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
  });

  it("passes a rejection before the deadline through", async () => {
    await expect(within(Promise.reject(new Error("boom")), 1_000, "late")).rejects.toThrow("boom");
  });
});
