import { describe, expect, it } from "vitest";
import { keyPart, signatureKey } from "../../../src/adapters/redis/redis-signature-index.js";

describe("Redis keys of tenants", () => {
  it("never collide across tenants whose ids contain the separator", () => {
    const a = `p:evt:${keyPart("a:b")}:${keyPart("c")}`;
    const b = `p:evt:${keyPart("a")}:${keyPart("b:c")}`;
    expect(a).not.toBe(b);
    expect(signatureKey("p", "a:b", "c")).not.toBe(signatureKey("p", "a", "b:c"));
    // An id that already looks encoded stays distinct from the one it looks like.
    expect(keyPart("a%3Ab")).not.toBe(keyPart("a:b"));
  });

  it("leaves ordinary ids as they are", () => {
    expect(signatureKey("p", "tenant-a", "0f3a9c")).toBe("p:sig:tenant-a:0f3a9c");
  });
});
