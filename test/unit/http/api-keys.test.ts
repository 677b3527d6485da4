import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import { createApiKeyring, parseApiKeys } from "../../../src/http/api-keys.js";

describe("API keys", () => {
  it("maps each bearer key to its tenant, ignoring blanks and spaces", () => {
    const keys = parseApiKeys(" alpha-key-1:tenant-a, ,beta-key-22:tenant-b ");
    expect([...keys].map(([key, grant]) => [key, grant.tenant])).toEqual([
      ["alpha-key-1", "tenant-a"],
      ["beta-key-22", "tenant-b"],
    ]);
    const ring = createApiKeyring(keys);
    expect(ring.size).toBe(2);
    expect(ring.tenantFor("alpha-key-1")).toBe("tenant-a");
    expect(ring.tenantFor("beta-key-22")).toBe("tenant-b");
    expect(ring.tenantFor("alpha-key-")).toBeNull();
    expect(ring.tenantFor("")).toBeNull();
  });

  it("lists every malformed entry at once", () => {
    expect(() => parseApiKeys("short:t,no-tenant-here,good-key-1:a,good-key-1:b,:x")).toThrow(
      "API_KEYS: entry 1: expected key:tenant or key:tenant:roles with a key of at least 8 characters; entry 2: expected key:tenant or key:tenant:roles with a key of at least 8 characters; entry 4: duplicate key; entry 5: expected key:tenant or key:tenant:roles with a key of at least 8 characters",
    );
  });

  it("keeps a colon inside a key (the tenant is after the last one)", () => {
    expect(parseApiKeys("abc:def:ghi:tenant-z").get("abc:def:ghi")?.tenant).toBe("tenant-z");
  });

  it("gives a key the roles after its tenant, and only `read` when it names none", () => {
    const keys = parseApiKeys(
      "reader-key-1:tenant-a:read, voter-key-22:tenant-a:read+vote, admin-key-333:tenant-a",
    );
    expect([...(keys.get("reader-key-1")?.roles ?? [])]).toEqual(["read"]);
    expect([...(keys.get("voter-key-22")?.roles ?? [])]).toEqual(["read", "vote"]);
    // A key written without roles may read; voting, deciding and overriding are granted by name.
    expect([...(keys.get("admin-key-333")?.roles ?? [])]).toEqual(["read"]);
    // Not a role list: part of the key, as before roles existed.
    expect(parseApiKeys("abc:def:tenant-z:admin").get("abc:def:tenant-z")?.tenant).toBe("admin");
  });

  it("answers 401 for everyone when no keys are configured", () => {
    expect(createApiKeyring(parseApiKeys("")).tenantFor("anything-at-all")).toBeNull();
  });
});

describe("API_KEYS in the configuration", () => {
  it("stops start-up with the key problems listed beside every other problem", () => {
    let problems: string[] = [];
    try {
      loadConfig({ API_KEYS: "short:t,good-key-1:a", HTTP_PORT: "seventy" });
    } catch (err) {
      if (err instanceof ConfigError) problems = err.problems;
    }
    expect(problems).toHaveLength(2);
    expect(problems.join("\n")).toMatch(/^HTTP_PORT: /m);
    expect(problems.join("\n")).toMatch(/^API_KEYS: entry 1: expected key:tenant/m);
  });
});
